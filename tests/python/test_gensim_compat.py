"""posvec against gensim 4.2, differentially: the same inputs through
gensim.models.KeyedVectors / Word2Vec and posvec's, comparing results, result types
and the exceptions raised. Skips when gensim is absent. docs/gensim-compatibility.md
lists what is covered here and what is out of scope."""

import os

import numpy as np
import pytest

import posvec

gm = pytest.importorskip("gensim.models", reason="gensim is not installed (python3-gensim)")

DIM = 8
WORDS = ["the", "war", "peace", "conflict", "army", "good", "nice", "bad", "cat", "dog",
         "house", "garden", "rain", "sun", "black", "brown", "red", "green", "sea", "ship"]
COUNTS = [100 - 4 * i for i in range(len(WORDS))]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A word2vec binary file and its vocabulary file, read by both libraries."""
    d = tmp_path_factory.mktemp("compat")
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((len(WORDS), DIM)).astype(np.float32)
    vectors[3] = vectors[1] * 0.9 + vectors[3] * 0.1  # conflict near war
    path, vocab = d / "v.bin", d / "v.vocab"
    with open(path, "wb") as f:
        f.write(f"{len(WORDS)} {DIM}\n".encode())
        for w, v in zip(WORDS, vectors):
            f.write(w.encode() + b" " + v.tobytes() + b"\n")
    vocab.write_text("".join(f"{w} {c}\n" for w, c in zip(WORDS, COUNTS)))
    return str(path), str(vocab)


@pytest.fixture
def both(files):
    path, vocab = files
    return (gm.KeyedVectors.load_word2vec_format(path, fvocab=vocab, binary=True),
            posvec.KeyedVectors.load_word2vec_format(path, fvocab=vocab, binary=True))


def same(theirs, ours, tol=1e-5):
    """Same value and same kind of value (list of (str, float), ndarray, float, ...)."""
    if theirs is None or ours is None:
        assert theirs is None and ours is None
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.shape == theirs.shape, (ours, theirs)
        assert np.allclose(ours, theirs, atol=tol, rtol=0, equal_nan=True)
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, type(theirs)) or isinstance(ours, list), (type(ours), type(theirs))
        assert len(ours) == len(theirs), (ours, theirs)
        for t, o in zip(theirs, ours):
            same(t, o, tol)
    elif isinstance(theirs, str):
        assert ours == theirs
    elif isinstance(theirs, (bool, np.bool_)):
        assert bool(ours) == bool(theirs)
    elif isinstance(theirs, (int, np.integer)):
        assert int(ours) == int(theirs), (ours, theirs)
    else:
        assert abs(float(ours) - float(theirs)) <= tol, (ours, theirs)


def raises_same(fn_theirs, fn_ours):
    """Both raise, and posvec's exception is an instance of gensim's type."""
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)):
        fn_ours()


def call_both(both, method, *args, **kwargs):
    g, p = both
    same(getattr(g, method)(*args, **kwargs), getattr(p, method)(*args, **kwargs))


# ---- KeyedVectors: queries ---------------------------------------------------------------

QUERIES = [
    dict(positive="war"),
    dict(positive=["war"], negative=["peace"]),
    dict(positive="war", negative="peace"),
    dict(positive=[("war", 2.0), ("army", 0.5)], negative=[("peace", 1.0)]),
    dict(positive=[3, "army"]),
    dict(positive=["good", "nice"], topn=3),
    dict(positive="war", topn=5, restrict_vocab=5),
    dict(positive=["war", "the"], topn=5, restrict_vocab=6),
    dict(positive="cat", topn=4, restrict_vocab=5),
    dict(positive="cat", topn=5, restrict_vocab=5),  # the input outside the 5 rows: 5 answers
    dict(positive="war", topn=None),
    dict(positive="war", topn=0),
    dict(positive="war", topn=np.uint8(0)),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: repr(q))
def test_most_similar(both, query):
    call_both(both, "most_similar", **query)


def plain(query):
    """Queries gensim's most_similar_cosmul takes: no weights, no row numbers."""
    items = query.get("positive") if isinstance(query.get("positive"), list) else []
    return not any(isinstance(x, (tuple, int)) for x in items)


# gensim 4.2's most_similar_cosmul ignores restrict_vocab; posvec's applies it (as most_similar).
@pytest.mark.parametrize("query", [q for q in QUERIES if plain(q) and "restrict_vocab" not in q],
                         ids=lambda q: repr(q))
def test_most_similar_cosmul(both, query):
    call_both(both, "most_similar_cosmul", **query)


def test_most_similar_with_vectors(both):
    g, p = both
    v = g.vectors[1]
    same(g.most_similar(positive=[v], topn=5), p.most_similar(positive=[v], topn=5))
    same(g.most_similar(v, topn=5), p.most_similar(v, topn=5))
    rows = g.vectors[0:5]
    same(g.most_similar(positive=rows), p.most_similar(positive=rows))
    same(g.most_similar("war", clip_start=2, clip_end=12, topn=4),
         p.most_similar("war", clip_start=2, clip_end=12, topn=4))
    same(g.similar_by_vector(v, topn=5), p.similar_by_vector(v, topn=5))
    same(g.similar_by_word("war", topn=5), p.similar_by_word("war", topn=5))
    same(g.similar_by_key("war", topn=5, restrict_vocab=8), p.similar_by_key("war", topn=5, restrict_vocab=8))


def test_most_similar_errors(both):
    g, p = both
    raises_same(lambda: g.most_similar("no-such-word"), lambda: p.most_similar("no-such-word"))
    raises_same(lambda: g.most_similar(positive=[]), lambda: p.most_similar(positive=[]))
    raises_same(lambda: g.similarity("war", "zzz"), lambda: p.similarity("war", "zzz"))
    raises_same(lambda: g["zzz"], lambda: p["zzz"])
    raises_same(lambda: g.n_similarity([], ["war"]), lambda: p.n_similarity([], ["war"]))
    raises_same(lambda: g.get_mean_vector([]), lambda: p.get_mean_vector([]))
    raises_same(lambda: g.get_mean_vector(["war", "zzz"], ignore_missing=False),
                lambda: p.get_mean_vector(["war", "zzz"], ignore_missing=False))


@pytest.mark.parametrize("method,args", [
    ("similarity", ("war", "conflict")),
    ("distance", ("war", "conflict")),
    ("distance", ("war", "war")),
    ("n_similarity", (["war", "army"], ["peace"])),
    ("closer_than", ("war", "army")),
    ("closer_than", ("war", "war")),
    ("rank", ("war", "army")),
    ("rank", ("war", "war")),
    ("distances", ("war",)),
    ("distances", ("war", ["peace", "army"])),
    ("relative_cosine_similarity", ("good", "nice", 5)),
    ("most_similar_to_given", ("war", ["peace", "conflict", "cat"])),
    ("doesnt_match", (["war", "conflict", "army", "cat"],)),
    ("get_mean_vector", (["war", "peace", "zzz"],)),
    ("get_mean_vector", (["war", "peace"], [1, 3])),
    ("get_mean_vector", (["war", "peace"], None, False)),
    ("get_mean_vector", (["war", "peace"], None, True, True)),
    ("get_index", ("peace",)),
    ("get_index", (4,)),
    ("get_vecattr", ("peace", "count")),
    ("has_index_for", ("peace",)),
    ("__contains__", ("zzz",)),
    ("__len__", ()),
    ("get_normed_vectors", ()),
])
def test_kv_methods(both, method, args):
    call_both(both, method, *args)


def test_distances_to_a_vector(both):
    g, p = both
    v = np.linspace(-1, 1, DIM).astype(np.float32)
    same(g.distances(v), p.distances(v))
    same(g.get_vector("war", norm=True), p.get_vector("war", norm=True))
    same(g[["war", "cat"]], p[["war", "cat"]])


# ---- KeyedVectors: changing them ---------------------------------------------------------

def test_add_and_set(both):
    g, p = both
    r = np.random.default_rng(3).standard_normal((7, DIM))
    for kv in both:
        kv.add_vectors("newword", r[0])  # one key, one 1-D vector
        kv.add_vectors(["war", "other"], r[1:3])  # war keeps its vector
        kv["war2"] = r[3]
        kv[["cat", "fresh"]] = [r[4], r[5]]
        kv.add_vectors(["dog"], [r[6]], replace=True)
    same(g.index_to_key, p.index_to_key)
    same(g.vectors, p.vectors)
    assert p.vectors.dtype == g.vectors.dtype == np.float32
    same(g.most_similar("newword", topn=4), p.most_similar("newword", topn=4))


def test_vectors_for_all(both):
    g, p = both
    keys = ["war", "zzz", "cat", "war"]
    for copy in (False, True):
        a, b = g.vectors_for_all(keys, copy_vecattrs=copy), p.vectors_for_all(keys, copy_vecattrs=copy)
        same(a.index_to_key, b.index_to_key)
        same(a.vectors, b.vectors)
        if copy:
            same(a.get_vecattr("cat", "count"), b.get_vecattr("cat", "count"))


def test_unit_normalize_and_sort(both):
    g, p = both
    for kv in both:
        kv.unit_normalize_all()
    same(g.vectors, p.vectors)
    for kv in both:
        kv.set_vecattr("ship", "count", 1000)
        kv.sort_by_descending_frequency()
    assert g.index_to_key[0] == p.index_to_key[0] == "ship"
    same(g.vectors, p.vectors)


# ---- KeyedVectors: files ---------------------------------------------------------------------

@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("options", [{}, dict(write_header=False), dict(prefix="en_"), dict(total_vec=25)])
def test_save_word2vec_format_read_by_the_other(both, tmp_path, binary, options):
    g, p = both
    if binary and not options.get("write_header", True):
        pytest.skip("gensim reads headerless text only")
    for name, writer, reader in (("g", g, posvec.KeyedVectors), ("p", p, gm.KeyedVectors)):
        path, vocab = tmp_path / f"{name}.w2v", tmp_path / f"{name}.vocab"
        writer.save_word2vec_format(path, fvocab=vocab, binary=binary, **options)
        if options.get("total_vec"):
            with pytest.raises(EOFError):  # the header promises more vectors than there are
                reader.load_word2vec_format(path, binary=binary)
            continue
        back = reader.load_word2vec_format(path, fvocab=vocab, binary=binary,
                                           no_header=not options.get("write_header", True))
        same(writer.index_to_key if "prefix" not in options else
             ["en_" + w for w in writer.index_to_key], back.index_to_key)
        same(writer.vectors, back.vectors, tol=1e-6)
        same(writer.get_vecattr("peace", "count"), back.get_vecattr(options.get("prefix", "") + "peace", "count"))


def test_save_word2vec_format_defaults_to_text(both, tmp_path):
    g, p = both
    g.save_word2vec_format(tmp_path / "g.txt")
    p.save_word2vec_format(tmp_path / "p.txt")
    assert (tmp_path / "g.txt").read_bytes().split(b"\n")[:1] == (tmp_path / "p.txt").read_bytes().split(b"\n")[:1]
    assert b"\x00" not in (tmp_path / "p.txt").read_bytes()[:200]


@pytest.mark.parametrize("datatype", [np.float16, np.float32, np.float64])
def test_load_datatype_and_limit(files, datatype):
    path, vocab = files
    g = gm.KeyedVectors.load_word2vec_format(path, binary=True, datatype=datatype, limit=7)
    p = posvec.KeyedVectors.load_word2vec_format(path, binary=True, datatype=datatype, limit=7)
    assert p.vectors.dtype == g.vectors.dtype
    same(g.index_to_key, p.index_to_key)
    same(g.vectors.astype(np.float64), p.vectors.astype(np.float64), tol=0)


def test_broken_files_raise_gensims_exceptions(tmp_path, both):
    g, _ = both
    text = tmp_path / "short.txt"
    g.save_word2vec_format(text, binary=False)
    binary = tmp_path / "short.bin"
    g.save_word2vec_format(binary, binary=True)
    for path, is_binary in ((text, False), (binary, True)):
        with open(path, "r+b") as f:
            f.write(b"99")  # the header now promises 99 vectors
        raises_same(lambda: gm.KeyedVectors.load_word2vec_format(path, binary=is_binary),
                    lambda: posvec.KeyedVectors.load_word2vec_format(path, binary=is_binary))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"2 3\n\xe3\x81\x82\xe3 0.6 0.6 0.6\nok 0.1 0.2 0.3\n")
    raises_same(lambda: gm.KeyedVectors.load_word2vec_format(bad, unicode_errors="strict"),
                lambda: posvec.KeyedVectors.load_word2vec_format(bad, unicode_errors="strict"))
    with pytest.raises(ValueError):  # posvec's own habit still works
        posvec.KeyedVectors.load_word2vec_format(bad, unicode_errors="strict")
    for errors in ("replace", "ignore"):
        a = gm.KeyedVectors.load_word2vec_format(bad, unicode_errors=errors)
        b = posvec.KeyedVectors.load_word2vec_format(bad, unicode_errors=errors)
        same(a.index_to_key, b.index_to_key)


# ---- KeyedVectors: evaluation -------------------------------------------------------------------

def test_evaluate_word_pairs_dummy4unknown(both, tmp_path):
    g, p = both
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("# comment\nwar\tconflict\t9\nwar\tpeace\t2\ncat\tdog\t7\ngood\tnice\t8\n"
                     "bad\tgood\t1\nzzz\tcat\t5\nsea\tship\t6\n")
    for kwargs in (dict(dummy4unknown=True), dict(dummy4unknown=False), dict(case_insensitive=False)):
        a, b = g.evaluate_word_pairs(pairs, **kwargs), p.evaluate_word_pairs(pairs, **kwargs)
        same(a[0][0], b[0][0], tol=1e-6)
        same(a[0][1], b[0][1], tol=1e-6)
        same(a[1][0], b[1][0], tol=1e-6)
        same(a[1][1], b[1][1], tol=1e-6)
        same(a[2], b[2], tol=1e-9)
    semi = tmp_path / "pairs.csv"
    semi.write_text("war;conflict;9\nwar;peace;2\ncat;dog;7\n")
    a, b = g.evaluate_word_pairs(semi, delimiter=";"), p.evaluate_word_pairs(semi, delimiter=";")
    same(a[0][0], b[0][0], tol=1e-6)


def test_evaluate_word_analogies_similarity_function(both, tmp_path):
    g, p = both
    questions = tmp_path / "q.txt"
    questions.write_text(": one\nwar peace good bad\ncat dog black brown\nsea ship rain sun\n"
                         ": two\nwar conflict good nice\nzzz war cat dog\n")
    for fn in ("most_similar", "most_similar_cosmul"):
        for dummy in (False, True):
            a = g.evaluate_word_analogies(questions, similarity_function=fn, dummy4unknown=dummy)
            b = p.evaluate_word_analogies(questions, similarity_function=fn, dummy4unknown=dummy)
            same(a[0], b[0])
            assert a[1] == b[1]


# ---- Word2Vec -------------------------------------------------------------------------------------

SENTENCES = [
    ["human", "interface", "computer"], ["survey", "user", "computer", "system", "response", "time"],
    ["eps", "user", "interface", "system"], ["system", "human", "system", "eps"],
    ["user", "response", "time"], ["trees"], ["graph", "trees"], ["graph", "minors", "trees"],
    ["graph", "minors", "survey"],
]
NEW = [["computer", "artificial", "intelligence"], ["artificial", "trees"], ["human", "intelligence"],
       ["artificial", "graph"], ["intelligence"], ["artificial", "intelligence", "system"]]
W2V = dict(vector_size=10, workers=1, seed=42)


def vocab_of(model):
    return {w: model.wv.get_vecattr(w, "count") for w in model.wv.index_to_key}


def drop_human(word, count, min_count):
    return 1 if word == "human" else 0  # RULE_DISCARD, else RULE_DEFAULT


@pytest.mark.parametrize("kwargs", [
    dict(min_count=1), dict(min_count=2), dict(min_count=0), dict(min_count=1, trim_rule=drop_human),
    dict(min_count=0, max_vocab_size=5), dict(min_count=1, max_final_vocab=4),
    dict(min_count=1, hs=1, negative=0), dict(min_count=1, sg=0, cbow_mean=1),
    dict(min_count=1, ns_exponent=-1), dict(min_count=1, ns_exponent=0.0),
    dict(min_count=1, shrink_windows=False), dict(min_count=1, sg=0, shrink_windows=False),
    dict(min_count=1, hs=0, negative=0),
    dict(min_count=1, sorted_vocab=1, batch_words=100, shrink_windows=True, null_word=0,
         compute_loss=True, comment="x", max_vocab_size=None),
])
def test_constructor_arguments_make_the_same_vocabulary(kwargs):
    g = gm.Word2Vec(SENTENCES, **W2V, **kwargs)
    p = posvec.Word2Vec(SENTENCES, **W2V, progress=False, **kwargs)
    assert vocab_of(p) == vocab_of(g)
    assert p.wv.vectors.shape == g.wv.vectors.shape
    for name in ("vector_size", "window", "min_count", "negative", "hs", "ns_exponent", "alpha", "min_alpha",
                 "sample", "epochs", "max_final_vocab", "cbow_mean", "corpus_count", "corpus_total_words"):
        if name in kwargs or name in ("corpus_count", "corpus_total_words", "vector_size"):
            assert getattr(p, name) == getattr(g, name), name


@pytest.mark.parametrize("name,value", [("sorted_vocab", 0), ("null_word", 1),
                                        ("hashfxn", lambda s: 0)])
def test_arguments_posvec_refuses_say_what_to_use(name, value):
    gm.Word2Vec(SENTENCES, min_count=1, **W2V, **{name: value})  # gensim takes them
    with pytest.raises(ValueError, match=name):
        posvec.Word2Vec(SENTENCES, min_count=1, progress=False, **W2V, **{name: value})


def test_summed_cbow_is_gensims_cbow_mean_0():
    # cbow_mean=0 trains (the kernel's rule is checked against a float64 reference in
    # tests/kernels_test.cpp) and reads back as gensim's attribute does.
    kwargs = dict(sg=0, min_count=1, epochs=20, **W2V)
    g = gm.Word2Vec(SENTENCES, cbow_mean=0, **kwargs)
    summed = posvec.Word2Vec(SENTENCES, cbow_mean=0, progress=False, **kwargs)
    mean = posvec.Word2Vec(SENTENCES, cbow_mean=1, progress=False, **kwargs)
    assert summed.cbow_mean == g.cbow_mean == 0 and mean.cbow_mean == 1
    assert np.isfinite(summed.wv.vectors).all()
    assert not np.allclose(summed.wv.vectors, mean.wv.vectors)
    with pytest.raises(ValueError, match="^cbow_mean: summed CBOW trains word vectors only"):
        posvec.FastText(SENTENCES, sg=0, cbow_mean=0, min_count=1, progress=False, **W2V)


def test_build_vocab_then_train_and_update():
    models = []
    for cls, extra in ((gm.Word2Vec, {}), (posvec.Word2Vec, dict(progress=False))):
        m = cls(min_count=1, **W2V, **extra)
        assert m.scan_vocab(SENTENCES) == (29, 9)
        report = m.prepare_vocab(dry_run=True)
        m = cls(min_count=1, **W2V, **extra)
        m.build_vocab(SENTENCES)
        m.train(SENTENCES, total_examples=m.corpus_count, epochs=m.epochs)
        before = m.wv["graph"].copy()
        m.build_vocab(NEW, update=True)
        assert not np.allclose(m.wv["graph"], 0) and np.array_equal(m.wv["graph"], before)
        m.train(NEW, total_examples=len(NEW), epochs=m.epochs)
        models.append((m, report))
    (g, rg), (p, rp) = models
    assert vocab_of(p) == vocab_of(g)
    assert {k: rp[k] for k in ("drop_unique", "retain_total", "num_retained_words")} == \
        {k: rg[k] for k in ("drop_unique", "retain_total", "num_retained_words")}


def test_build_vocab_from_freq_and_update():
    freq = {"minors": 2, "graph": 3, "system": 4, "trees": 3, "eps": 2, "computer": 2}
    more = {"computer": 1, "artificial": 4, "graph": 1}
    out = []
    for cls, extra in ((gm.Word2Vec, {}), (posvec.Word2Vec, dict(progress=False))):
        for hs in (0, 1):
            m = cls(min_count=0, hs=hs, negative=0 if hs else 5, **W2V, **extra)
            m.build_vocab_from_freq(freq)
            m.build_vocab_from_freq(more, update=True)
            out.append(vocab_of(m))
    assert out[0] == out[2] and out[1] == out[3]


def test_max_final_vocab_raises_min_count_as_gensim():
    for kwargs in (dict(max_final_vocab=4, min_count=4), dict(max_final_vocab=4, min_count=2)):
        g, p = gm.Word2Vec(sample=0, **W2V, **kwargs), posvec.Word2Vec(sample=0, **W2V, progress=False, **kwargs)
        g.scan_vocab(SENTENCES)
        p.scan_vocab(SENTENCES)
        rg, rp = g.prepare_vocab(), p.prepare_vocab()
        for key in ("drop_unique", "retain_total", "num_retained_words"):
            assert rp[key] == rg[key], key
        assert p.effective_min_count == g.effective_min_count


def test_callbacks_are_called_in_gensims_order():
    class Record:
        def __init__(self):
            self.calls = []

        def on_train_begin(self, model):
            self.calls.append("train_begin")

        def on_epoch_begin(self, model):
            self.calls.append("epoch_begin")

        def on_epoch_end(self, model):
            self.calls.append("epoch_end")

        def on_train_end(self, model):
            self.calls.append("train_end")

    g, p = Record(), Record()
    gm.Word2Vec(SENTENCES, min_count=1, epochs=3, callbacks=[g], **W2V)
    posvec.Word2Vec(SENTENCES, min_count=1, epochs=3, callbacks=[p], progress=False, **W2V)
    assert p.calls == g.calls


def test_training_loss():
    for compute_loss in (True, False):
        g = gm.Word2Vec(SENTENCES, min_count=1, compute_loss=compute_loss, **W2V)
        p = posvec.Word2Vec(SENTENCES, min_count=1, compute_loss=compute_loss, progress=False, **W2V)
        assert (g.get_latest_training_loss() > 0) == (p.get_latest_training_loss() > 0) == compute_loss
        assert isinstance(p.get_latest_training_loss(), float)


def test_predict_output_word():
    g = gm.Word2Vec(SENTENCES, min_count=1, **W2V)
    p = posvec.Word2Vec(SENTENCES, min_count=1, progress=False, **W2V)
    for m in (g, p):
        out = m.predict_output_word(["system", "human"], topn=5)
        assert len(out) == 5 and all(isinstance(w, str) and 0 < prob < 1 for w, prob in out)
        assert m.predict_output_word(["zzz", "yyy"]) is None
        i = m.wv.get_index("system")
        assert m.predict_output_word([i, "human"], topn=5) == out
    gh = gm.Word2Vec(SENTENCES, min_count=1, hs=1, negative=0, **W2V)
    ph = posvec.Word2Vec(SENTENCES, min_count=1, hs=1, negative=0, progress=False, **W2V)
    raises_same(lambda: gh.predict_output_word(["system"]), lambda: ph.predict_output_word(["system"]))
    g0 = gm.Word2Vec(SENTENCES, min_count=1, hs=0, negative=0, **W2V)
    p0 = posvec.Word2Vec(SENTENCES, min_count=1, hs=0, negative=0, progress=False, **W2V)
    raises_same(lambda: g0.predict_output_word(["system"]), lambda: p0.predict_output_word(["system"]))


def test_vector_files_are_not_models(tmp_path):
    g = gm.Word2Vec(SENTENCES, min_count=1, **W2V)
    p = posvec.Word2Vec(SENTENCES, min_count=1, progress=False, **W2V)
    g.wv.save(str(tmp_path / "g.kv"))  # gensim: a pickle of KeyedVectors
    p.wv.save(tmp_path / "p.kv")  # posvec: word2vec binary
    raises_same(lambda: gm.Word2Vec.load(str(tmp_path / "g.kv")),
                lambda: posvec.Word2Vec.load(tmp_path / "p.kv"))


def test_word2vec_errors_are_gensims():
    gen = (s for s in SENTENCES)
    gen2 = (s for s in SENTENCES)
    raises_same(lambda: gm.Word2Vec((gen,)), lambda: posvec.Word2Vec((gen2,), progress=False))
    raises_same(lambda: gm.Word2Vec([]), lambda: posvec.Word2Vec([], progress=False))
    raises_same(lambda: gm.Word2Vec(SENTENCES, min_count=100), lambda: posvec.Word2Vec(SENTENCES, min_count=100,
                                                                                      progress=False))
    raises_same(lambda: gm.Word2Vec().load("x"), lambda: posvec.Word2Vec(progress=False).load("x"))
    g, p = gm.Word2Vec(**W2V), posvec.Word2Vec(progress=False, **W2V)
    raises_same(lambda: g.build_vocab(NEW, update=True), lambda: p.build_vocab(NEW, update=True))
    # Vectors alone assigned to a new model: nothing to train (gensim's own test expects
    # ValueError; called here, gensim 4.2 hangs in its worker threads, so posvec only).
    p = posvec.Word2Vec(progress=False)
    p.wv = posvec.Word2Vec(SENTENCES, min_count=1, progress=False, **W2V).wv
    with pytest.raises(ValueError, match="vectors only"):
        p.train(SENTENCES, total_examples=9, epochs=1)


def test_save_load_keeps_ns_exponent_and_vocabulary(tmp_path):
    p = posvec.Word2Vec(SENTENCES, min_count=1, ns_exponent=-1, progress=False, **W2V)
    p.save(tmp_path / "m.posvec")
    back = posvec.Word2Vec.load(tmp_path / "m.posvec")
    assert back.ns_exponent == -1 and vocab_of(back) == vocab_of(p)
    back.build_vocab(NEW, update=True)
    back.train(NEW, total_examples=len(NEW), epochs=1)
    back.save(tmp_path / "m2.posvec")
    again = posvec.Word2Vec.load(tmp_path / "m2.posvec")
    assert "artificial" in again.wv and vocab_of(again) == vocab_of(back)
    assert os.path.getsize(tmp_path / "m2.posvec") > os.path.getsize(tmp_path / "m.posvec")


def test_score_under_hierarchical_softmax():
    for sg in (1, 0):
        g = gm.Word2Vec(SENTENCES, min_count=1, hs=1, negative=0, sg=sg, **W2V)
        p = posvec.Word2Vec(SENTENCES, min_count=1, hs=1, negative=0, sg=sg, progress=False, **W2V)
        a, b = g.score(SENTENCES, len(SENTENCES)), p.score(SENTENCES, len(SENTENCES))
        assert b.dtype == a.dtype == np.float32 and b.shape == a.shape
        # log-probabilities; a one-word sentence has no context and scores 0
        assert np.all(b <= 0) and b[5] == 0
        # a two-word sentence by hand, in double: each word given the other
        pair = ["graph", "trees"]
        points, codes = p._huffman()
        inner, vec = p._model.output.astype(np.float64), p.wv.vectors.astype(np.float64)

        def log_p(l1, w):
            i = p.wv.get_index(w)
            return sum(np.log(1 / (1 + np.exp(-(1 - 2 * c) * (inner[pt] @ l1))))
                       for pt, c in zip(points[i], codes[i]))

        i, j = p.wv.get_index("graph"), p.wv.get_index("trees")
        expected = (log_p(vec[i], "trees") + log_p(vec[j], "graph") if sg else
                    log_p(vec[j], "graph") + log_p(vec[i], "trees"))
        assert abs(p.score([pair], 1)[0] - expected) < 1e-5
    g = gm.Word2Vec(SENTENCES, min_count=1, **W2V)
    p = posvec.Word2Vec(SENTENCES, min_count=1, progress=False, **W2V)
    raises_same(lambda: g.score(SENTENCES), lambda: p.score(SENTENCES))


def test_huffman_paths_are_a_prefix_code_weighted_by_count():
    """The tree score() walks is a Huffman code: prefix-free, and frequent words have
    paths no longer than rare ones (checked on its own, independent of the trainer)."""
    p = posvec.Word2Vec(SENTENCES, min_count=1, hs=1, negative=0, progress=False, **W2V)
    points, codes = p._huffman()
    words = p.wv.index_to_key
    strings = ["".join(map(str, c)) for c in codes]
    assert len(set(strings)) == len(words)
    assert not any(a != b and b.startswith(a) for a in strings for b in strings)
    counts = [p.wv.get_vecattr(w, "count") for w in words]
    for i in range(len(words)):
        for j in range(len(words)):
            if counts[i] > counts[j]:
                assert len(codes[i]) <= len(codes[j])
    assert sorted({x for path in points for x in path}) == list(range(len(words) - 1))
