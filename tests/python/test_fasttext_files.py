"""gensim reads the fastText .bin that posvec writes: load_facebook_model and
load_facebook_vectors give the vectors fastText's own CLI prints from the same file,
for words in the vocabulary and for unknown words built from character n-grams.

fastText trains a small model here; posvec's writer (through the test helper
posvec_fasttext_resave) writes it again with its input matrix doubled and no output
layer, so the file under test is posvec's, not a copy of fastText's. fastText's own file,
rewritten as version 11 and as the layout before 0.9, is read by posvec as fastText prints
it and as gensim reads it. Skips when fastText, gensim or the helper is absent."""

import os
import shutil
import subprocess

import numpy as np
import pytest

gm = pytest.importorskip("gensim.models.fasttext",
                         reason="gensim is not installed (python3-gensim)")

QUERIES = ["walk", "walked", "caf\u00e9", "walking", "caf\u00e9teria", "\u65e5\u672c", "zz"]


def printed_vectors(path, words):
    """`fasttext print-word-vectors` for `words`: word -> float64 array."""
    out = subprocess.run(["fasttext", "print-word-vectors", path], input="\n".join(words) + "\n",
                         capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        fields = line.split(" ")
        result[fields[0]] = np.array([float(x) for x in fields[1:] if x], dtype=np.float64)
    return result


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if shutil.which("fasttext") is None:
        pytest.skip("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)")
    helper = os.environ.get("POSVEC_FASTTEXT_RESAVE")
    if not helper or not os.path.exists(helper):
        pytest.skip("the posvec_fasttext_resave helper is not built (POSVEC_FASTTEXT_RESAVE unset)")
    d = tmp_path_factory.mktemp("fasttext")
    vocab = ["walk", "walks", "walked", "talk", "talks", "talked", "caf\u00e9", "caf\u00e9s",
             "run", "runs"]
    rng = np.random.default_rng(3)
    corpus = d / "corpus.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(vocab, 10)) for _ in range(300)) + "\n",
                      encoding="utf-8")
    subprocess.run(["fasttext", "skipgram", "-input", str(corpus), "-output", str(d / "ft"),
                    "-dim", "12", "-epoch", "1", "-minCount", "1", "-thread", "1",
                    "-bucket", "700", "-minn", "2", "-maxn", "5", "-verbose", "0"], check=True)
    ours = d / "posvec.bin"
    subprocess.run([helper, str(d / "ft.bin"), str(ours), "2"], check=True)
    return str(d / "ft.bin"), str(ours)


def test_gensim_reads_posvecs_file_as_fasttext_does(files):
    theirs, ours = files
    expected = printed_vectors(ours, QUERIES)
    model = gm.load_facebook_model(ours)
    vectors = gm.load_facebook_vectors(ours)
    assert model.wv.vector_size == 12
    assert model.wv.bucket == 700
    assert (model.wv.min_n, model.wv.max_n) == (2, 5)
    assert "walk" in model.wv.key_to_index
    assert "walking" not in model.wv.key_to_index
    for word in QUERIES:
        # fastText prints 5 significant digits: equal to 1e-5 within that rounding.
        want = expected[word]
        for got in (model.wv[word], vectors[word]):
            assert got.shape == (12,)
            assert np.all(np.abs(got - want) <= 1e-5 + 5e-5 * np.abs(want)), word
        np.testing.assert_array_equal(model.wv[word], vectors[word])


def test_posvecs_file_holds_the_doubled_vectors(files):
    theirs, ours = files
    original = gm.load_facebook_vectors(theirs)
    doubled = gm.load_facebook_vectors(ours)
    for word in QUERIES:
        np.testing.assert_allclose(doubled[word], 2 * original[word], rtol=1e-6, atol=1e-7)
    # The output layer posvec left out is zeros.
    model = gm.load_facebook_model(ours)
    assert not np.any(model.syn1neg)


def older_layouts(path, directory):
    """fastText's own .bin rewritten as version 11 and as the layout before 0.9 (no magic
    and version, no pruned-bucket size after the token count, no quantisation flag before
    each matrix), from the layout as gensim's reader describes it."""
    import struct
    b = open(path, "rb").read()
    magic, version = struct.unpack_from("<2i", b, 0)
    assert (magic, version) == (793712314, 12)
    at = 8 + 12 * 4 + 8                      # the settings block
    size, nwords, nlabels = struct.unpack_from("<3i", b, at)
    ntokens_at = at + 12
    prune_at = ntokens_at + 8
    (prune,) = struct.unpack_from("<q", b, prune_at)
    assert prune == -1
    p = prune_at + 8
    for _ in range(size):                    # word, NUL, int64 count, int8 type
        p = b.index(b"\0", p) + 1 + 9
    dim = struct.unpack_from("<i", b, 8)[0]
    rows, cols = struct.unpack_from("<2q", b, p + 1)
    out_flag = p + 1 + 16 + rows * cols * 4
    v11 = b[:4] + struct.pack("<i", 11) + b[8:]
    old = (b[8:prune_at] + b[prune_at + 8:p] + b[p + 1:out_flag] + b[out_flag + 1:])
    assert cols == dim
    paths = {}
    for name, data in (("v11.bin", v11), ("old.bin", old)):
        paths[name] = str(directory / name)
        with open(paths[name], "wb") as f:
            f.write(data)
    return paths


def test_older_fasttext_layouts_read_as_fasttext_and_gensim_read_them(files, tmp_path):
    cli = os.environ.get("POSVEC_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("the posvec command line is not built (POSVEC_CLI unset)")
    theirs, _ = files
    expected = printed_vectors(theirs, QUERIES)
    for name, path in older_layouts(theirs, tmp_path).items():
        out = subprocess.run([cli, "vector", path] + QUERIES, capture_output=True, text=True,
                             check=True).stdout
        got = {line.split(" ")[0]: np.array([float(x) for x in line.split(" ")[1:]])
               for line in out.splitlines()}
        reference = gm.load_facebook_vectors(path)
        for word in QUERIES:
            want = expected[word]
            assert np.all(np.abs(got[word] - want) <= 1e-5 + 5e-5 * np.abs(want)), (name, word)
            assert np.all(np.abs(reference[word] - got[word]) <= 1e-6 + 1e-5 * np.abs(want)), \
                (name, word)
