"""posvec.load_facebook_vectors / load_facebook_model on a model trained by
fastText's own CLI in the test: the vocabulary's vectors against gensim's
load_facebook_vectors, unknown words against fastText's print-word-vectors and
against the mean of the n-gram rows computed here from fastText's published rule
(n-grams of "<word>" over UTF-8 characters, FNV-1a with sign-extended bytes)."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import posvec

FASTTEXT = shutil.which("fasttext")
DIM, MINN, MAXN, BUCKET = 12, 3, 6, 2000
STEMS = ["walk", "talk", "run", "jump", "café", "naïve"]
ENDINGS = ["", "s", "ed", "ing", "er"]
KNOWN = ["walk", "talking", "cafés", "naïve", "jumper"]
UNKNOWN_ASCII = ["walkers", "jumpy", "runningly"]
UNKNOWN_ACCENTED = "décafé"


def ngrams(word, minn, maxn):
    """fastText's n-grams of '<word>': by start character, then length; none for </s>."""
    if word == "</s>":
        return []
    chars = ["<"] + list(word) + [">"]  # Python characters are code points: UTF-8 characters
    out = []
    for i in range(len(chars)):
        for n in range(1, maxn + 1):
            if i + n > len(chars):
                break
            if n >= minn and not (n == 1 and (i == 0 or i + n == len(chars))):
                out.append("".join(chars[i:i + n]))
    return out


def fnv1a_signed(data):
    h = 2166136261
    for b in data:
        x = b | 0xFFFFFF00 if b >= 0x80 else b
        h = ((h ^ x) * 16777619) % 2**32
    return h


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    if FASTTEXT is None:
        pytest.skip("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)")
    d = tmp_path_factory.mktemp("fasttext")
    vocab = [s + e for s in STEMS for e in ENDINGS]
    rng = np.random.default_rng(3)
    lines = [" ".join(rng.choice(vocab, 12)) for _ in range(400)]
    (d / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run([FASTTEXT, "skipgram", "-input", str(d / "corpus.txt"), "-output", str(d / "m"),
                    "-dim", str(DIM), "-epoch", "2", "-minCount", "1", "-thread", "1",
                    "-bucket", str(BUCKET), "-minn", str(MINN), "-maxn", str(MAXN), "-verbose", "0"],
                   check=True)
    return str(d / "m.bin")


def fasttext_vectors(path, words):
    """fastText's print-word-vectors (values with 5 significant digits)."""
    out = subprocess.run([FASTTEXT, "print-word-vectors", path], input="\n".join(words) + "\n",
                         capture_output=True, check=True, encoding="utf-8").stdout
    got = {}
    for line in out.splitlines():
        fields = line.split()
        got[fields[0]] = np.array([float(x) for x in fields[1:]])
    return got


def close_to_printed(ours, printed):
    return np.all(np.abs(ours - printed) <= 1e-5 + 5e-5 * np.abs(printed))


def test_vocabulary_matches_gensim(model, gensim_models):
    ours = posvec.load_facebook_vectors(model)
    theirs = gensim_models.fasttext.load_facebook_vectors(model)
    assert ours.key_to_index == theirs.key_to_index
    assert ours.index_to_key[0] == "</s>"
    assert ours.vectors.shape == theirs.vectors.shape == (len(theirs.key_to_index), DIM)
    # Row 0 is </s>, which has no n-grams in fastText (its vector is its own row) but
    # gets "<</s>>"'s in gensim: compared with fastText's CLI in the next test.
    np.testing.assert_allclose(ours.vectors[1:], theirs.vectors[1:], rtol=0, atol=1e-5)
    for w in KNOWN:
        np.testing.assert_allclose(ours[w], theirs[w], rtol=0, atol=1e-5)
    # gensim's n-gram hashing agrees with fastText's for ASCII words.
    for w in UNKNOWN_ASCII:
        np.testing.assert_allclose(ours[w], theirs[w], rtol=0, atol=1e-5)
        assert ours.similarity(w, "walk") == pytest.approx(float(theirs.similarity(w, "walk")), abs=1e-5)
    assert (ours.min_n, ours.max_n, ours.bucket) == (theirs.min_n, theirs.max_n, theirs.bucket)
    # Neighbours of an unknown word: each cosine as gensim computes it (the order may
    # differ only where two cosines agree to float32 rounding).
    for word, sim in ours.most_similar("walkers", topn=5):
        assert sim == pytest.approx(float(theirs.similarity("walkers", word)), abs=1e-5)
    assert ours.most_similar("walkers", topn=1)[0][1] == pytest.approx(
        theirs.most_similar("walkers", topn=1)[0][1], abs=1e-5)


def test_unknown_words_match_fasttext_cli(model):
    kv = posvec.load_facebook_vectors(model)
    words = ["</s>"] + KNOWN + UNKNOWN_ASCII + [UNKNOWN_ACCENTED]
    printed = fasttext_vectors(model, words)
    for w in words:
        assert close_to_printed(kv[w], printed[w]), w
    assert UNKNOWN_ACCENTED not in kv.key_to_index
    assert kv.get_vector(UNKNOWN_ACCENTED, norm=True) == pytest.approx(
        printed[UNKNOWN_ACCENTED] / np.linalg.norm(printed[UNKNOWN_ACCENTED]), abs=1e-4)


def test_unknown_word_is_the_mean_of_its_ngram_rows(model):
    kv = posvec.load_facebook_vectors(model)
    ngram_rows = kv.vectors_ngrams
    assert ngram_rows.shape == (BUCKET, DIM)
    for w in UNKNOWN_ASCII + [UNKNOWN_ACCENTED]:
        rows = [fnv1a_signed(g.encode("utf-8")) % BUCKET for g in ngrams(w, MINN, MAXN)]
        want = ngram_rows[rows].astype(np.float64).mean(axis=0)
        np.testing.assert_allclose(kv[w], want, rtol=0, atol=1e-6)
    # A known word: its own row and its n-gram rows.
    w = "cafés"
    rows = [fnv1a_signed(g.encode("utf-8")) % BUCKET for g in ngrams(w, MINN, MAXN)]
    own = kv.vectors_vocab[kv.key_to_index[w]].astype(np.float64)
    want = (own + ngram_rows[rows].astype(np.float64).sum(axis=0)) / (len(rows) + 1)
    np.testing.assert_allclose(kv[w], want, rtol=0, atol=1e-6)


def test_most_similar_and_membership(model):
    kv = posvec.load_facebook_vectors(model)
    assert "walkers" in kv and UNKNOWN_ACCENTED in kv
    assert not kv.has_index_for("walkers") and kv.has_index_for("walk")
    assert 7 not in kv
    found = kv.most_similar("walkers", topn=5)
    assert len(found) == 5
    # The cosines, computed here from the vectors, in decreasing order.
    q = kv["walkers"].astype(np.float64)
    for word, sim in found:
        v = kv.vectors[kv.key_to_index[word]].astype(np.float64)
        assert sim == pytest.approx(q @ v / np.linalg.norm(q) / np.linalg.norm(v), abs=1e-6)
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    sims = kv.vectors.astype(np.float64) @ q / np.linalg.norm(kv.vectors, axis=1) / np.linalg.norm(q)
    assert found[0][1] == pytest.approx(sims.max(), abs=1e-6)
    # A known input is left out of its own neighbours, an unknown one cannot be among them.
    assert all(w != "walk" for w, _ in kv.most_similar(["walk", "walkers"], topn=5))
    assert kv.most_similar(positive=["walkers"], negative=["talk"], topn=3)
    cosmul = kv.most_similar_cosmul(positive=["walkers", "talk"], negative=["walk"], topn=3)
    assert len(cosmul) == 3 and all(w not in ("talk", "walk") for w, _ in cosmul)
    a, b = kv["walkers"].astype(np.float64), kv["walk"].astype(np.float64)
    assert kv.similarity("walkers", "walk") == pytest.approx(
        a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-7)


def test_vectors_are_zero_copy_and_read_only(model):
    kv = posvec.load_facebook_vectors(model)
    v = kv.vectors
    assert np.shares_memory(v, kv._e.vectors)
    assert not v.flags.writeable and not v.flags.owndata
    assert np.shares_memory(kv["walk"], v)
    assert not kv.vectors_ngrams.flags.writeable


def test_load_facebook_model(model):
    ft = posvec.load_facebook_model(model)
    assert isinstance(ft.wv, posvec.FastTextKeyedVectors)
    assert ft.vector_size == DIM and (ft.min_n, ft.max_n, ft.bucket) == (MINN, MAXN, BUCKET)
    np.testing.assert_array_equal(ft.wv["walkers"], posvec.load_facebook_vectors(model)["walkers"])


def test_encode_builds_unknown_words(model):
    kv = posvec.load_facebook_vectors(model)
    inputs, padding = posvec.encode(kv, ["walk walkers", "décafé"], dtype=np.float64)
    assert inputs.shape == (2, 2, DIM) and padding.tolist() == [[False, False], [False, True]]
    # Vaswani et al.'s encoding, written out: sin / cos of p / 10000^(2i/d) at columns 2i, 2i+1.
    def pe(p):
        i = np.arange(DIM) // 2
        angle = p / 10000.0 ** (2 * i / DIM)
        return np.where(np.arange(DIM) % 2 == 0, np.sin(angle), np.cos(angle))
    s = np.sqrt(DIM)
    np.testing.assert_allclose(inputs[0, 0], kv["walk"] * s + pe(0), rtol=0, atol=1e-6)
    np.testing.assert_allclose(inputs[0, 1], kv["walkers"] * s + pe(1), rtol=0, atol=1e-6)
    np.testing.assert_allclose(inputs[1, 0], kv["décafé"] * s + pe(0), rtol=0, atol=1e-6)
    assert not inputs[1, 1].any()


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        posvec.load_facebook_vectors(tmp_path / "missing.bin")
    text = tmp_path / "v.txt"
    text.write_text("1 2\na 1 2\n")
    with pytest.raises(ValueError, match="fastText"):
        posvec.load_facebook_vectors(text)
    truncated = tmp_path / "t.bin"
    truncated.write_bytes(bytes([0xBA, 0x16, 0x4F, 0x2F, 12, 0, 0, 0, 5]))
    with pytest.raises(ValueError):
        posvec.load_facebook_model(truncated)


# ---- files posvec's reader must take as fastText's CLI and gensim take them (issue #45) ----

def train_fasttext(directory, name, lines, *args):
    """fastText's CLI on a corpus of byte lines (a corpus need not be UTF-8 to fastText)."""
    corpus = directory / f"{name}.txt"
    corpus.write_bytes(b"\n".join(lines) + b"\n")
    subprocess.run([FASTTEXT, "skipgram", "-input", str(corpus), "-output", str(directory / name),
                    "-dim", "8", "-epoch", "1", "-minCount", "1", "-thread", "1", "-bucket", "300",
                    "-verbose", "0", *map(str, args)], check=True)
    return str(directory / f"{name}.bin")


def printed_bytes(path, words):
    """fastText's print-word-vectors for words given as bytes: bytes -> float64 array."""
    out = subprocess.run([FASTTEXT, "print-word-vectors", path], input=b"\n".join(words) + b"\n",
                         capture_output=True, check=True).stdout
    return {f[0]: np.array([float(x) for x in f[1:]]) for f in map(bytes.split, out.splitlines())}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if FASTTEXT is None:
        pytest.skip("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)")
    d = tmp_path_factory.mktemp("fasttext_files")
    rng = np.random.default_rng(5)
    latin1 = [b"walk", b"walks", b"walked", b"talk", b"caf\xe9", b"na\xefve", b"run"]
    lines = [b" ".join(rng.choice(latin1, 10)) for _ in range(200)]
    long_ngrams = [b"walk", b"walked", b"talking", b"runner", b"jumped"]
    return dict(latin1=train_fasttext(d, "latin1", lines, "-minn", 2, "-maxn", 4),
                maxn70=train_fasttext(d, "maxn70", [b" ".join(rng.choice(long_ngrams, 10))
                                                    for _ in range(200)], "-minn", 3, "-maxn", 70))


def test_a_word_that_is_not_utf8_is_keyed_as_gensim_keys_it(files, gensim_models, caplog):
    # gensim 4 decodes such a word with errors="backslashreplace" (and logs it).
    path = files["latin1"]
    theirs = gensim_models.fasttext.load_facebook_vectors(path)
    cafe = b"caf\xe9".decode("utf-8", "backslashreplace")
    assert cafe == "caf\\xe9" and cafe in theirs.key_to_index
    with caplog.at_level("WARNING", logger="posvec.fasttext"):
        kv = posvec.load_facebook_vectors(path)
    assert kv.index_to_key == theirs.index_to_key
    assert kv.key_to_index == theirs.key_to_index
    row = theirs.key_to_index[cafe]
    assert any(path in r.getMessage() and f"word {row} " in r.getMessage() and repr(cafe) in
               r.getMessage() for r in caplog.records), caplog.text
    # The word's vector is fastText's own, composed from its bytes (gensim recomposes it
    # from the n-grams of its key, a vector fastText never gives).
    printed = printed_bytes(path, [b"caf\xe9", b"walk"])
    assert close_to_printed(kv[cafe], printed[b"caf\xe9"])
    assert close_to_printed(kv["walk"], printed[b"walk"])
    found = kv.most_similar(cafe, topn=3)
    assert len(found) == 3 and all(w in theirs.key_to_index and w != cafe for w, _ in found)
    assert cafe in [w for w, _ in kv.most_similar("walk", topn=len(kv) - 1)]
    model = posvec.load_facebook_model(path)
    assert model.wv.index_to_key == theirs.index_to_key
    # The model keeps the bytes: written back, the file is fastText's, byte for byte.
    out = os.path.join(os.path.dirname(path), "latin1-again.bin")
    model.save_facebook_model(out)
    assert open(out, "rb").read() == open(path, "rb").read()


def test_a_key_that_is_also_another_words_bytes_is_refused_naming_both(tmp_path):
    if FASTTEXT is None:
        pytest.skip("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)")
    words = [b"walk", b"caf\xe9", b"caf\\xe9"]  # the second reads as the third's text
    path = train_fasttext(tmp_path, "both", [b" ".join(words)] * 20)
    with pytest.raises(ValueError) as refused:
        posvec.load_facebook_vectors(path)
    message = str(refused.value)
    assert message.startswith(f"'{path}': word ") and "the same key as word" in message
    assert "caf\\xe9" in message and "UTF-8" in message


def test_load_facebook_model_reads_maxn_past_64_as_load_facebook_vectors(files, gensim_models):
    path = files["maxn70"]
    model = posvec.load_facebook_model(path)
    assert (model.min_n, model.max_n, model.bucket) == (3, 70, 300)
    assert (model.wv.min_n, model.wv.max_n) == (3, 70)
    assert gensim_models.fasttext.load_facebook_model(path).wv.max_n == 70
    vectors = posvec.load_facebook_vectors(path)
    long_word = "jumpedwalkedtalkingrunner" * 3  # 75 characters: n-grams up to 70 of them
    printed = printed_bytes(path, [long_word.encode(), b"walked"])
    for word in (long_word, "walked"):
        np.testing.assert_array_equal(model.wv[word], vectors[word])
        assert close_to_printed(model.wv[word], printed[word.encode()]), word


def test_save_of_a_loaded_model_says_what_to_do(model, tmp_path):
    ft = posvec.load_facebook_model(model)
    with pytest.raises(NotImplementedError) as refused:
        ft.save(tmp_path / "m.posvec")
    message = str(refused.value)
    assert model in message and "save_facebook_model" in message and "\n" not in message
    assert not (tmp_path / "m.posvec").exists()
    # What it says to do works: the .bin written back is fastText's file.
    ft.save_facebook_model(tmp_path / "m.bin")
    assert (tmp_path / "m.bin").read_bytes() == open(model, "rb").read()


# ---- posvec.FastText: training with subwords ---------------------------------------------

TRAIN = dict(vector_size=16, window=3, min_count=1, min_n=3, max_n=5, bucket=500, epochs=2,
             workers=1, seed=5)


@pytest.fixture(scope="module")
def trained():
    vocab = [s + e for s in STEMS for e in ENDINGS if s + e != "walkers"]
    rng = np.random.default_rng(11)
    sentences = [list(rng.choice(vocab, 10)) for _ in range(300)]
    return posvec.FastText(sentences=sentences, **TRAIN)


def ngram_rows(word, minn, maxn, bucket):
    return [fnv1a_signed(g.encode("utf-8")) % bucket for g in ngrams(word, minn, maxn)]


def test_fasttext_unknown_word_is_the_mean_of_its_ngram_rows(trained):
    wv = trained.wv
    assert isinstance(wv, posvec.FastTextKeyedVectors)
    assert (trained.min_n, trained.max_n, trained.bucket) == (3, 5, 500)
    assert "walkers" not in wv.key_to_index and "walkers" in wv
    grams = wv.vectors_ngrams.astype(np.float64)
    assert grams.shape == (500, 16)
    for w in ("walkers", UNKNOWN_ACCENTED, "xyzzy"):
        want = grams[ngram_rows(w, 3, 5, 500)].mean(axis=0)
        np.testing.assert_allclose(wv[w], want, rtol=0, atol=1e-6)
    # A word of the vocabulary: its own row and its n-gram rows (what .vectors holds).
    for w in ("walk", "cafés"):
        rows = ngram_rows(w, 3, 5, 500)
        own = wv.vectors_vocab[wv.key_to_index[w]].astype(np.float64)
        want = (own + grams[rows].sum(axis=0)) / (len(rows) + 1)
        np.testing.assert_allclose(wv[w], want, rtol=0, atol=1e-6)
        np.testing.assert_allclose(wv.vectors[wv.key_to_index[w]], want, rtol=0, atol=1e-6)
    assert np.shares_memory(wv.vectors, wv._e.vectors) and not wv.vectors.flags.writeable
    found = wv.most_similar("walkers", topn=3)
    q = wv["walkers"].astype(np.float64)
    for word, sim in found:
        v = wv.vectors[wv.key_to_index[word]].astype(np.float64)
        assert sim == pytest.approx(q @ v / np.linalg.norm(q) / np.linalg.norm(v), abs=1e-6)


def test_fasttext_trains_in_bfloat16(tmp_path):
    vocab = [s + e for s in STEMS for e in ENDINGS if s + e != "walkers"]
    rng = np.random.default_rng(11)
    sentences = [list(rng.choice(vocab, 10)) for _ in range(300)]
    model = posvec.FastText(sentences=sentences, weights="bf16", **TRAIN)
    wv = model.wv
    grams = wv.vectors_ngrams
    assert grams.shape == (500, 16) and np.isfinite(grams).all()
    # Every stored weight is a bfloat16 value: the low 16 bits of its float32 are zero.
    assert not (grams.view(np.uint32) & 0xFFFF).any()
    assert not (wv.vectors_vocab.view(np.uint32) & 0xFFFF).any()
    for w in ("walkers", "xyzzy"):
        want = grams.astype(np.float64)[ngram_rows(w, 3, 5, 500)].mean(axis=0)
        np.testing.assert_allclose(wv[w], want, rtol=0, atol=1e-6)
    # fastText's .bin holds the widened values: read back, the same vectors.
    path = tmp_path / "bf16.bin"
    posvec.save_facebook_model(model, path)
    back = posvec.load_facebook_vectors(path)
    for w in ("walkers", "walk", "cafés"):
        np.testing.assert_array_equal(back[w], wv[w])


def test_fasttext_saved_bin_reads_back_in_gensim_and_posvec(trained, tmp_path, gensim_models):
    path = tmp_path / "ft.bin"
    posvec.save_facebook_model(trained, path)
    theirs = gensim_models.fasttext.load_facebook_vectors(str(path))
    wv = trained.wv
    assert theirs.key_to_index == wv.key_to_index
    np.testing.assert_allclose(theirs.vectors, wv.vectors, rtol=0, atol=1e-5)
    for w in ("walkers", "xyzzy", "walk", UNKNOWN_ACCENTED):
        np.testing.assert_allclose(theirs[w], wv[w], rtol=0, atol=1e-5)
    again = posvec.load_facebook_model(path)
    assert (again.min_n, again.max_n, again.bucket, again.vector_size) == (3, 5, 500, 16)
    np.testing.assert_allclose(again.wv["walkers"], wv["walkers"], rtol=0, atol=1e-6)
    # The method spelling writes the same file; a loaded model writes itself back.
    trained.save_facebook_model(tmp_path / "ft2.bin")
    assert (tmp_path / "ft2.bin").read_bytes() == path.read_bytes()
    again.save_facebook_model(tmp_path / "ft3.bin")
    assert (tmp_path / "ft3.bin").read_bytes() == path.read_bytes()


def test_fasttext_posvec_model_file_round_trip(trained, tmp_path):
    trained.save(tmp_path / "m.posvec")
    back = posvec.FastText.load(tmp_path / "m.posvec")
    assert (back.min_n, back.max_n, back.bucket) == (3, 5, 500)
    np.testing.assert_array_equal(back.wv["walkers"], trained.wv["walkers"])
    with pytest.raises(ValueError, match="FastText.load"):
        posvec.Word2Vec.load(tmp_path / "m.posvec")


def test_fasttext_refuses_bad_settings():
    with pytest.raises(ValueError, match="bucket"):
        posvec.FastText(bucket=-1)
    # word_ngrams: gensim's argument, 1 only, and gensim's exception otherwise.
    assert posvec.FastText(word_ngrams=1).word_ngrams == 1
    with pytest.raises(NotImplementedError, match="word_ngrams"):
        posvec.FastText(word_ngrams=2)
    with pytest.raises(ValueError, match="min_n"):
        posvec.FastText(min_n=0)
    with pytest.raises(TypeError):
        posvec.FastText(bucket="many")
    with pytest.raises(TypeError, match="posvec.FastText"):
        posvec.save_facebook_model(posvec.Word2Vec(), "x.bin")


def test_a_supervised_model_is_not_implemented_as_in_gensim(tmp_path):
    if FASTTEXT is None:
        pytest.skip("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)")
    lines = ["__label__%s %s" % (k % 2, " ".join(["good", "bad", "fine"][: 1 + k % 3]))
             for k in range(60)]
    (tmp_path / "train.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run([FASTTEXT, "supervised", "-input", str(tmp_path / "train.txt"), "-output",
                    str(tmp_path / "clf"), "-dim", "4", "-epoch", "1", "-thread", "1",
                    "-verbose", "0"], check=True)
    for load in (posvec.load_facebook_vectors, posvec.load_facebook_model):
        with pytest.raises(NotImplementedError, match="supervised model"):
            load(str(tmp_path / "clf.bin"))
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    with pytest.raises(NotImplementedError):
        gensim_fasttext.load_facebook_vectors(str(tmp_path / "clf.bin"))


def test_fasttext_build_vocab_then_train_is_training_at_once():
    """gensim's workflow (FastText(), build_vocab, train) trains bitwise the model
    FastText(sentences) trains at one thread; build_vocab(update=True) adds words, keeping
    every vector the model gave, and training goes on."""
    vocab = [s + e for s in STEMS for e in ENDINGS]
    rng = np.random.default_rng(12)
    sentences = [list(rng.choice(vocab, 10)) for _ in range(300)]
    at_once = posvec.FastText(sentences=sentences, **TRAIN)
    staged = posvec.FastText(**TRAIN)
    staged.build_vocab(sentences)
    assert staged.wv.index_to_key == at_once.wv.index_to_key
    assert staged.corpus_count == len(sentences)
    staged.train(sentences, total_examples=staged.corpus_count, epochs=staged.epochs)
    assert np.array_equal(staged.wv.vectors, at_once.wv.vectors)
    for word in ("walkers", "zzzq", vocab[3]):  # unknown words go through the n-gram rows
        assert np.array_equal(staged.wv[word], at_once.wv[word])
    before = {w: staged.wv[w].copy() for w in (vocab[0], vocab[7], "zzzq", "walkers")}
    more = [["brandnew", "walking", "talks"]] * 3
    staged.build_vocab(more, update=True)
    assert "brandnew" in staged.wv.key_to_index and len(staged.wv) == len(at_once.wv) + 1
    for word, vector in before.items():  # known and unknown words alike
        assert np.array_equal(staged.wv[word], vector), word
    added = staged.wv["brandnew"].copy()
    staged.train(more, total_examples=len(more), epochs=1)
    assert not np.array_equal(staged.wv["brandnew"], added)  # trained
    assert np.isfinite(staged.wv.vectors).all()


def test_fasttext_with_no_buckets_trains_word_vectors_only(tmp_path, gensim_models):
    """bucket=0, as gensim's and fastText's: no n-gram rows, an unknown word has no vector
    (KeyError), and gensim reads the saved .bin with the same word vectors."""
    vocab = [s + e for s in STEMS for e in ENDINGS]
    rng = np.random.default_rng(13)
    sentences = [list(rng.choice(vocab, 10)) for _ in range(300)]
    model = posvec.FastText(sentences=sentences, **dict(TRAIN, bucket=0))
    assert model.bucket == 0 and vocab[0] in model.wv and "walkz" not in model.wv
    with pytest.raises(KeyError):
        model.wv["walkz"]
    model.save_facebook_model(tmp_path / "m.bin")
    theirs = gensim_models.fasttext.load_facebook_model(str(tmp_path / "m.bin"))
    assert theirs.wv.bucket == 0
    assert np.array_equal(theirs.wv.vectors, model.wv.vectors)
    with pytest.raises(KeyError):
        theirs.wv["walkz"]


def test_fasttext_keyed_vectors_save_load_keep_the_ngrams(trained, tmp_path, gensim_models):
    """FastTextKeyedVectors.save writes fastText's .bin, whatever the name, so load (and
    KeyedVectors.load) gives back unknown words' vectors; vectors_for_all builds unknown
    words with allow_inference, as gensim's on the same file."""
    wv = trained.wv
    path = tmp_path / "vectors.model"
    wv.save(path)
    for loaded in (posvec.FastTextKeyedVectors.load(path), posvec.KeyedVectors.load(path)):
        assert isinstance(loaded, posvec.FastTextKeyedVectors)
        assert loaded.index_to_key == wv.index_to_key
        assert "walkers" in loaded and not loaded.has_index_for("walkers")
        assert np.array_equal(loaded["walkers"], wv["walkers"])
        assert np.array_equal(loaded.vectors, wv.vectors)
    theirs = gensim_models.fasttext.load_facebook_vectors(str(path))
    keys = [wv.index_to_key[2], "walkers", "zzq", wv.index_to_key[2]]
    for inference in (True, False):
        ours = wv.vectors_for_all(keys, allow_inference=inference)
        want = theirs.vectors_for_all(keys, allow_inference=inference)
        assert ours.index_to_key == want.index_to_key
        assert np.allclose(ours.vectors, want.vectors, atol=1e-6)
    with pytest.raises(ValueError, match="not a fastText .bin"):
        wv.save_word2vec_format(tmp_path / "w.bin", binary=True)
        posvec.FastTextKeyedVectors.load(tmp_path / "w.bin")
