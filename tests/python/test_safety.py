"""Safety of the Python package: one training per model at a time, proper Python
errors for bad arguments, and NumPy views that keep their C++ owner alive."""

import gc
import threading

import numpy as np
import pytest

import posvec

SENTENCES = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "ran", "in", "the", "park"]] * 200
OPTS = dict(vector_size=16, min_count=1, workers=1, seed=3)


def test_a_second_train_from_another_thread_is_refused_while_the_first_runs():
    started, tried = threading.Event(), threading.Event()

    def hold(fields):
        # The first report of the first training: hold it until the other thread tried.
        if not started.is_set():
            started.set()
            tried.wait()

    model = posvec.Word2Vec(SENTENCES, epochs=1, progress=False, **OPTS)
    model.progress = hold
    errors = []

    def first():
        try:
            model.train(SENTENCES, total_examples=len(SENTENCES), epochs=3)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=first)
    t.start()
    # Waits for the first training's report (or its end, if it failed before one).
    while not started.wait(0.01):
        assert t.is_alive(), errors
    try:
        with pytest.raises(RuntimeError, match="already training"):
            model.train(SENTENCES, total_examples=len(SENTENCES), epochs=2)
        with pytest.raises(RuntimeError, match="another thread"):
            model.save("/nonexistent-dir/never.posvec")
    finally:
        tried.set()
        t.join()
    assert errors == []
    # Only the first training ran: 1 + 3 epochs, one loss each, and the model is whole.
    assert model.epochs_done == 4
    assert len(model.losses) == 4
    # A train() after the first one returned runs.
    model.progress = False
    model.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    assert model.epochs_done == 5


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (2**64, ValueError), (1.5, TypeError),
                                         ("7", TypeError)])
def test_bad_seeds_are_python_errors(seed, error):
    with pytest.raises(error, match="seed"):
        posvec.Word2Vec(SENTENCES, epochs=1, progress=False, vector_size=8, min_count=1, seed=seed)


def test_numpy_seeds_are_integers():
    a = posvec.Word2Vec(SENTENCES, epochs=1, progress=False, vector_size=8, min_count=1, workers=1,
                        seed=np.int64(5))
    b = posvec.Word2Vec(SENTENCES, epochs=1, progress=False, vector_size=8, min_count=1, workers=1,
                        seed=5)
    assert np.array_equal(a.wv.vectors, b.wv.vectors)


def test_a_zero_copy_view_keeps_its_matrix_alive_after_every_python_owner_is_gone():
    model = posvec.Word2Vec(SENTENCES, epochs=1, progress=False, **OPTS)
    expected = np.array(model.wv.vectors, copy=True)  # an independent copy
    view = model.wv.vectors
    # Zero copy: the array does not own its memory (its base holds the C++ owner).
    assert not view.flags.owndata
    assert view.base is not None
    del model
    gc.collect()
    # Memory freed and reused would show other values here: fill the heap with
    # arrays of another pattern of about the same size first.
    litter = [np.full(expected.shape, -12345.0, dtype=expected.dtype) for _ in range(64)]
    np.testing.assert_array_equal(view, expected)
    del litter
    # The same through KeyedVectors loaded from a file.
    kv = posvec.KeyedVectors(4)
    kv.add_vectors(["x", "y"], np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32))
    v = kv.vectors
    del kv
    gc.collect()
    litter = [np.full((2, 4), -1.0, dtype=np.float32) for _ in range(256)]
    np.testing.assert_array_equal(v, [[1, 2, 3, 4], [5, 6, 7, 8]])


def test_add_vectors_refuses_a_row_with_nan_at_once():
    kv = posvec.KeyedVectors(3)
    kv.add_vectors(["a"], np.array([[1, 2, 3]], dtype=np.float32))
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="'c' \\(row 1\\)"):
            kv.add_vectors(["b", "c"], np.array([[1, 2, 3], [4, bad, 6]], dtype=np.float32))
    # Nothing was added by the refused calls.
    assert len(kv) == 1
    kv.add_vectors(["b"], np.array([[4, 5, 6]], dtype=np.float32))
    assert len(kv) == 2


def test_encode_ids_refuses_ids_outside_the_vocabulary():
    from posvec import _posvec

    kv = posvec.KeyedVectors(4)
    kv.add_vectors(["a", "b"], np.eye(2, 4, dtype=np.float32))
    e = kv._require_words()
    ok = _posvec.encode_ids(e, [[0, 1, -1]], "interleaved", 10000.0, "sqrt", 0, False, False)
    assert ok.shape == (1, 3, 4)
    for bad in (2, 1 << 30, -2):
        with pytest.raises(IndexError, match="out of range for 2 words"):
            _posvec.encode_ids(e, [[0, bad]], "interleaved", 10000.0, "sqrt", 0, False, False)


@pytest.mark.parametrize("sentences, error, where", [
    ([["a", "b"], ["a", 1]], TypeError, "token 2 of sentence 2 is int"),
    ([["a", "b"], "a b"], TypeError, "str"),
    ([["a", "\ud800"]], ValueError, "token 2 of sentence 1"),
    (iter([["a", 2.5]]), TypeError, "tokens must be str"),
])
def test_bad_tokens_are_python_errors_naming_the_token(sentences, error, where):
    with pytest.raises(error, match=where):
        posvec.Word2Vec(sentences, epochs=1, progress=False, vector_size=4, min_count=1)
