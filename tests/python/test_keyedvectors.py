"""KeyedVectors: zero-copy storage, gensim 4 names and results (parity with gensim
on the same files), errors as Python exceptions."""

import importlib.util
import math
import os
import sys

import numpy as np
import pytest

import posvec
from conftest import CORPUS, random_vectors, shared_data


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Vectors trained on the bundled corpus, saved as word2vec binary."""
    path = tmp_path_factory.mktemp("kv") / "corpus.bin"
    model = posvec.Word2Vec(corpus_file=CORPUS, vector_size=48, min_count=2, epochs=3, workers=1,
                            progress=False)
    model.wv.save_word2vec_format(path, binary=True)
    return str(path)


def test_vectors_share_memory_with_the_cpp_matrix(trained):
    kv = posvec.KeyedVectors.load_word2vec_format(trained)
    v = kv.vectors
    assert v.dtype == np.float32 and v.shape == (len(kv), kv.vector_size) == (len(kv), 48)
    assert np.shares_memory(v, kv._e.vectors)
    assert v is kv.vectors  # one view, not a copy per access
    assert not v.flags.writeable
    row = kv.get_vector(kv.index_to_key[3])
    assert np.shares_memory(row, v)
    # the view keeps the matrix alive after the KeyedVectors object is gone
    first = v[0].copy()
    del kv
    assert np.array_equal(v[0], first)


def test_vocabulary_names_as_gensim(trained):
    kv = posvec.KeyedVectors.load_word2vec_format(trained, binary=True)
    assert kv.key_to_index[kv.index_to_key[5]] == 5
    assert "black" in kv and "no-such-word" not in kv and 3 not in kv
    assert np.array_equal(kv["black"], kv.vectors[kv.key_to_index["black"]])
    assert kv[["black", "brown"]].shape == (2, 48)
    unit = kv.get_vector("black", norm=True)
    assert math.isclose(float(np.linalg.norm(unit.astype(np.float64))), 1.0, rel_tol=1e-6)



def test_counts_of_a_trained_model():
    text = "the black cat . the brown dog . the cat ."
    sentences = [s.split() for s in text.split(" . ")]
    kv = posvec.Word2Vec(sentences, vector_size=8, min_count=2, epochs=1, progress=False).wv
    assert kv.index_to_key == ["the", "cat"]
    assert [kv.get_vecattr(w, "count") for w in kv.index_to_key] == [3, 2]


def test_limit_keeps_the_first_words(trained):
    full = posvec.KeyedVectors.load_word2vec_format(trained)
    few = posvec.KeyedVectors.load_word2vec_format(trained, limit=10)
    assert few.index_to_key == full.index_to_key[:10]
    assert np.array_equal(few.vectors, full.vectors[:10])


def test_errors_are_python_exceptions(tmp_path, trained):
    kv = posvec.KeyedVectors.load_word2vec_format(trained)
    with pytest.raises(KeyError, match="did you mean 'black'"):
        kv["Black"]
    with pytest.raises(KeyError, match="not present"):
        kv.similarity("black", "zzzz")
    with pytest.raises(FileNotFoundError):
        posvec.KeyedVectors.load_word2vec_format(tmp_path / "missing.bin")
    with pytest.raises(IsADirectoryError):
        posvec.KeyedVectors.load(tmp_path)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"3 4\nabc \x00\x00")
    with pytest.raises(ValueError, match="bad.bin"):
        posvec.KeyedVectors.load(bad)
    with pytest.raises(ValueError, match="binary=False"):
        posvec.KeyedVectors.load_word2vec_format(trained, binary=False)
    with pytest.raises(OSError):
        kv.save_word2vec_format(tmp_path / "no" / "such" / "dir.bin")
    assert not os.path.exists(tmp_path / "no")


def test_save_and_load_round_trip(tmp_path, trained):
    kv = posvec.KeyedVectors.load(trained)
    for name in ("a.bin", "a.txt", "a.npy"):
        kv.save(tmp_path / name)
        back = posvec.KeyedVectors.load(tmp_path / name)
        assert back.index_to_key == kv.index_to_key
        if name.endswith(".txt"):
            assert np.allclose(back.vectors, kv.vectors, rtol=1e-6, atol=1e-7)
        else:
            assert np.array_equal(back.vectors, kv.vectors)


def test_add_vectors_and_queries_match_numpy():
    words = ["a", "b", "c", "d", "e"]
    vecs = random_vectors(words, 6, seed=3)
    kv = posvec.KeyedVectors(6)
    kv.add_vectors(words, vecs)
    unit = vecs.astype(np.float64) / np.linalg.norm(vecs.astype(np.float64), axis=1)[:, None]
    expected = unit @ unit[0]
    order = [i for i in np.argsort(-expected) if i != 0]
    got = kv.most_similar("a", topn=4)
    assert [w for w, _ in got] == [words[i] for i in order]
    assert np.allclose([s for _, s in got], expected[order], atol=1e-6)
    assert math.isclose(kv.similarity("a", "c"), expected[2], rel_tol=1e-12)
    # n_similarity: cosine of the two means; doesnt_match: farthest from the mean of unit vectors
    m1, m2 = vecs[[0, 1]].astype(np.float64).mean(0), vecs[[2]].astype(np.float64).mean(0)
    assert math.isclose(kv.n_similarity(["a", "b"], ["c"]),
                        m1 @ m2 / np.linalg.norm(m1) / np.linalg.norm(m2), rel_tol=1e-6)
    mean = unit.mean(0)
    assert kv.doesnt_match(words) == words[int(np.argmin(unit @ mean))]


# ---- parity with gensim on the same files ---------------------------------------------


def assert_same_neighbours(ours, theirs, tol=1e-6):
    """Same words with the same cosines (to tol); words may only trade places
    where their cosines are within tol of each other (float32 rounding)."""
    assert len(ours) == len(theirs)
    assert np.allclose([s for _, s in ours], [s for _, s in theirs], atol=tol, rtol=0)
    theirs_d = dict(theirs)
    for i, (word, score) in enumerate(ours):
        if theirs[i][0] == word:
            continue
        assert abs(theirs[i][1] - score) < tol, (i, word, theirs[i])
        if word in theirs_d:
            assert abs(theirs_d[word] - score) < tol


def test_most_similar_matches_gensim(trained, gensim_models):
    ours = posvec.KeyedVectors.load_word2vec_format(trained)
    theirs = gensim_models.KeyedVectors.load_word2vec_format(trained, binary=True)
    assert ours.index_to_key == theirs.index_to_key
    queries = [dict(positive=["black"]), dict(positive=["cat", "brown"], negative=["black"]),
               dict(positive=["dog"], topn=25, restrict_vocab=200),
               dict(positive=[("cat", 2.0), "house"], negative=["the"], topn=5)]
    for q in queries:
        assert_same_neighbours(ours.most_similar(**q), theirs.most_similar(**q))
        q.pop("restrict_vocab", None)
        if any(isinstance(w, tuple) for w in q["positive"]):
            continue  # weights are most_similar's only
        assert_same_neighbours(ours.most_similar_cosmul(**q), theirs.most_similar_cosmul(**q))
    assert np.allclose(ours.most_similar("cat", topn=None), theirs.most_similar("cat", topn=None),
                       atol=1e-6)
    for w1, w2 in [("black", "brown"), ("cat", "dog"), ("the", "garden")]:
        assert abs(ours.similarity(w1, w2) - float(theirs.similarity(w1, w2))) < 1e-6
    assert abs(ours.n_similarity(["cat", "dog"], ["house"]) -
               float(theirs.n_similarity(["cat", "dog"], ["house"]))) < 1e-6
    assert ours.doesnt_match(["cat", "dog", "kitten", "the"]) == \
        theirs.doesnt_match(["cat", "dog", "kitten", "the"])


@pytest.fixture(scope="module")
def analogy_vectors(tmp_path_factory):
    """Vectors for every word of questions-words.txt (written by gensim): random,
    except that the first questions of each section are made answerable, and
    some words also appear lowercased (case folding must pick the first)."""
    gm = pytest.importorskip("gensim.models", reason="gensim is not installed (python3-gensim)")
    path = shared_data("questions-words.txt")
    words, questions = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(":"):
                continue
            q = line.split()
            questions.append(q)
            words += q
    words = list(dict.fromkeys(words))
    words += [w.lower() for w in words[::7] if w.lower() not in words]
    vecs = random_vectors(words, 24, seed=11).astype(np.float64)
    index = {w: i for i, w in enumerate(words)}
    unit = lambda w: vecs[index[w]] / np.linalg.norm(vecs[index[w]])  # noqa: E731
    fixed = set()
    for q in questions[::40]:
        if q[3] not in fixed and not {q[0], q[1], q[2]} & fixed:
            vecs[index[q[3]]] = unit(q[1]) - unit(q[0]) + unit(q[2])
            fixed.add(q[3])
    kv = gm.KeyedVectors(24)
    kv.add_vectors(words, vecs.astype(np.float32))
    out = tmp_path_factory.mktemp("analogies") / "vectors.bin"
    kv.save_word2vec_format(str(out), binary=True)
    return str(out), path


@pytest.mark.parametrize("options", [{}, {"restrict_vocab": 500}, {"case_insensitive": False},
                                     {"dummy4unknown": True, "restrict_vocab": 300}])
def test_evaluate_word_analogies_matches_gensim(analogy_vectors, gensim_models, options):
    vectors, questions = analogy_vectors
    ours = posvec.KeyedVectors.load_word2vec_format(vectors)
    theirs = gensim_models.KeyedVectors.load_word2vec_format(vectors, binary=True)
    score, sections = ours.evaluate_word_analogies(questions, **options)
    g_score, g_sections = theirs.evaluate_word_analogies(questions, **options)
    assert sections == g_sections
    assert score == g_score
    total = sections[-1]
    assert total["section"] == "Total accuracy" and total["correct"] and total["incorrect"]


@pytest.mark.parametrize("name", ["wordsim353.tsv", "simlex999.txt"])
def test_evaluate_word_pairs_matches_gensim(tmp_path, gensim_models, name):
    pairs = shared_data(name)
    words = []
    with open(pairs, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                words += line.split("\t")[:2]
    words = list(dict.fromkeys(words))[::-1][: len(set(words)) - 9]  # a few pairs out of vocabulary
    kv = gensim_models.KeyedVectors(16)
    kv.add_vectors(words, random_vectors(words, 16, seed=5) + 0.3)
    path = str(tmp_path / "pairs.bin")
    kv.save_word2vec_format(path, binary=True)
    ours = posvec.KeyedVectors.load_word2vec_format(path)
    theirs = gensim_models.KeyedVectors.load_word2vec_format(path, binary=True)
    for options in ({}, {"restrict_vocab": 200}):
        (pr, pp), (sr, sp), oov = ours.evaluate_word_pairs(pairs, **options)
        g_pearson, g_spearman, g_oov = theirs.evaluate_word_pairs(pairs, **options)
        assert oov == g_oov and oov > 0
        assert abs(pr - g_pearson[0]) < 1e-6 and abs(sr - g_spearman[0]) < 1e-6
        assert math.isclose(pp, g_pearson[1], rel_tol=1e-4)
        assert math.isclose(sp, g_spearman[1], rel_tol=1e-4)


def test_correlation_pvalue_matches_scipy():
    stats = pytest.importorskip("scipy.stats", reason="SciPy is not installed")
    from posvec._stats import correlation_pvalue
    rng = np.random.default_rng(2)
    for n in (3, 5, 30, 353, 999):
        x = rng.standard_normal(n)
        y = x * rng.uniform(0, 1) + rng.standard_normal(n)
        r, p = stats.pearsonr(x, y)
        assert math.isclose(correlation_pvalue(r, n), p, rel_tol=1e-9, abs_tol=1e-300)


def _write_vec(path, records, binary):
    """word2vec text or binary with raw byte words (records: [(bytes, [floats])])."""
    dim = len(records[0][1])
    with open(path, "wb") as f:
        f.write(f"{len(records)} {dim}\n".encode())
        for word, values in records:
            if binary:
                f.write(word + b" " + np.asarray(values, dtype="<f4").tobytes() + b"\n")
            else:
                f.write(word + b" " + " ".join(repr(float(v)) for v in values).encode() + b"\n")


@pytest.mark.parametrize("binary", [True, False])
def test_unicode_errors_as_python_decodes(tmp_path, binary):
    # gensim's pang_lee_polarity_fasttext.vec has a word with a lone 0x97 byte.
    raw = [b"ca\x97t", b"\xed\xa0\x80x", b"d\xc3\xa9j\xe0", b"dog"]
    records = [(w, [i, i + 0.5]) for i, w in enumerate(raw)]
    path = tmp_path / ("v.bin" if binary else "v.txt")
    _write_vec(path, records, binary)
    with pytest.raises(ValueError, match=r"'ca\\x97t' is not valid UTF-8") as err:
        posvec.KeyedVectors.load_word2vec_format(path, binary=binary)
    assert "\x97" not in str(err.value)
    for mode in ("replace", "ignore"):
        kv = posvec.KeyedVectors.load_word2vec_format(path, binary=binary, unicode_errors=mode)
        # Expected words from Python's own decoder, independent of posvec.
        assert kv.index_to_key == [w.decode("utf-8", mode) for w in raw]
        assert np.array_equal(kv.vectors, np.array([v for _, v in records], dtype=np.float32))
    with pytest.raises(ValueError, match="unicode_errors"):
        posvec.KeyedVectors.load_word2vec_format(path, unicode_errors="surrogateescape")


def test_limit_stops_before_a_broken_record(tmp_path):
    path = tmp_path / "l.txt"
    path.write_text("4 2\na 1 2\nb 3 4\nc nan 1\n")  # record 3 is NaN, and record 4 is missing
    kv = posvec.KeyedVectors.load_word2vec_format(path, limit=2)
    assert kv.index_to_key == ["a", "b"]
    assert kv.vectors.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="NaN"):
        posvec.KeyedVectors.load_word2vec_format(path, limit=3)
    with pytest.raises(ValueError, match="limit"):
        posvec.KeyedVectors.load_word2vec_format(path, limit=-1)


def test_no_header_reads_glove_text(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("the 0.5 -1\ncat 0.25 4\ndog 8 16\n")
    kv = posvec.KeyedVectors.load_word2vec_format(path, no_header=True)
    assert kv.index_to_key == ["the", "cat", "dog"] and kv.vector_size == 2
    assert kv.vectors.tolist() == [[0.5, -1.0], [0.25, 4.0], [8.0, 16.0]]
    kv = posvec.KeyedVectors.load_word2vec_format(path, no_header=True, limit=1, binary=False)
    assert kv.index_to_key == ["the"]
    with pytest.raises(ValueError, match="no_header"):
        posvec.KeyedVectors.load_word2vec_format(path)
    with pytest.raises(ValueError, match="text files only"):
        posvec.KeyedVectors.load_word2vec_format(path, no_header=True, binary=True)


def test_vector_file_options_agree_with_gensim(tmp_path, gensim_models):
    raw = [b"ca\x97t", b"na\xc3\xafve", b"\xf0\x80y", b"z\xe2\x82", b"dog", b"cat"]
    records = [(w, [i, -i, 0.25 * i]) for i, w in enumerate(raw)]
    for binary in (True, False):
        path = tmp_path / ("v.bin" if binary else "v.txt")
        _write_vec(path, records, binary)
        for mode, limit in (("replace", None), ("replace", 3), ("ignore", 5)):
            ours = posvec.KeyedVectors.load_word2vec_format(path, binary=binary, unicode_errors=mode,
                                                           limit=limit)
            theirs = gensim_models.KeyedVectors.load_word2vec_format(
                path, binary=binary, unicode_errors=mode, limit=limit)
            assert ours.index_to_key == theirs.index_to_key
            assert np.array_equal(ours.vectors, theirs.vectors)
    glove = tmp_path / "glove.txt"
    glove.write_text("the 0.5 -1\ncat 0.25 4\ndog 8 16\n")
    for limit in (None, 2):
        ours = posvec.KeyedVectors.load_word2vec_format(glove, no_header=True, limit=limit)
        theirs = gensim_models.KeyedVectors.load_word2vec_format(glove, no_header=True, limit=limit)
        assert ours.index_to_key == theirs.index_to_key
        assert np.array_equal(ours.vectors, theirs.vectors)


@pytest.mark.parametrize("binary", [True, False])
def test_the_module_users_import_never_truncates_a_file_for_a_test_variable(tmp_path, monkeypatch,
                                                                             binary):
    # Before: the library read POSVEC_TEST_SHRINK_MAPPED in every build, so the module
    # truncated a user's vectors file to that size when the variable was set. The seam
    # now lives in the C++ test programs only (tests/limits_test.cpp checks the
    # truncated file is an error there, not SIGBUS).
    words = [f"w{i}" for i in range(3000)]
    kv = posvec.KeyedVectors(50)
    kv.add_vectors(words, random_vectors(words, 50, 3))
    path = tmp_path / ("v.bin" if binary else "v.txt")
    kv.save_word2vec_format(path, binary=binary)
    before = path.read_bytes()
    monkeypatch.setenv("POSVEC_TEST_SHRINK_MAPPED", "65536")
    monkeypatch.setenv("POSVEC_TEST_RESIZE_INPUT", "0")
    assert len(posvec.KeyedVectors.load_word2vec_format(path, binary=binary)) == 3000
    assert path.read_bytes() == before


def test_messages_name_the_keyword_of_the_setting(tmp_path):
    # The library names the setting (unicodeErrors); the package spells it as its
    # keyword, taken from the setting's row, where the CLI would say --unicode-errors.
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 2\nbl\x97ck 1.0 2.0\n")
    with pytest.raises(UnicodeDecodeError) as caught:
        posvec.KeyedVectors.load_word2vec_format(bad)
    message = str(caught.value)
    assert "load with unicode_errors= 'replace'" in message
    assert "--unicode-errors" not in message


def test_wmdistance_matches_gensim_and_hand_computed_cases(trained, gensim_models, monkeypatch):
    pytest.importorskip("pyemd", reason="pyemd is not installed (python3-pyemd): gensim's "
                                        "wmdistance needs it")
    ours = posvec.KeyedVectors.load_word2vec_format(trained)
    theirs = gensim_models.KeyedVectors.load_word2vec_format(trained, binary=True)
    pairs = [(["the", "black", "cat", "sat", "on", "the", "couch"],
              ["the", "brown", "dog", "slept", "on", "the", "rug"]),
             (["cat", "cat", "dog"], ["house", "garden"]),
             (["cat", "notaword"], ["dog"]),  # the unknown word is dropped
             (["notaword"], ["dog"]),  # nothing left of one document: infinity
             (["cat"], ["cat", "cat"]),  # one and the same word: 0
             (["dog", "cat"], ["cat", "dog"])]  # the same weights: 0 of every move
    for d1, d2 in pairs:
        for norm in (True, False):
            want, got = theirs.wmdistance(d1, d2, norm=norm), ours.wmdistance(d1, d2, norm=norm)
            assert (math.isinf(got) and math.isinf(want)) or \
                got == pytest.approx(want, rel=1e-9, abs=1e-12), (d1, d2, norm, got, want)
    cat = ours.get_vector("cat", norm=True).astype(np.float64)
    dog = ours.get_vector("dog", norm=True).astype(np.float64)
    # One word each: all the weight moves from one to the other.
    assert ours.wmdistance(["cat"], ["dog"]) == pytest.approx(np.linalg.norm(cat - dog), rel=1e-9)
    # Half the weight stays on "cat", half moves from "dog" to it.
    assert ours.wmdistance(["cat", "dog"], ["cat"]) == \
        pytest.approx(np.linalg.norm(cat - dog) / 2, rel=1e-9)
    # POT solves the same problem when pyemd is absent (pyemd rounds the costs to about a
    # millionth of the largest, POT does not); without either, one ImportError.
    want = theirs.wmdistance(*pairs[1])
    monkeypatch.setitem(sys.modules, "pyemd", None)
    if importlib.util.find_spec("ot") is not None:
        assert ours.wmdistance(*pairs[1]) == pytest.approx(want, rel=1e-5)
    monkeypatch.setitem(sys.modules, "ot", None)
    with pytest.raises(ImportError, match="python3-pyemd.*python3-pot"):
        ours.wmdistance(*pairs[0])
