"""Positional encodings, encode and relative_shift: the CLI's bits, and the
formulas checked independently in float64."""

import os

import numpy as np
import pytest

import posvec
from conftest import random_vectors


def reference_pe(positions, dim, base=10000.0):
    """Vaswani et al.: PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(...)."""
    p = np.asarray(positions, dtype=np.float64)[:, None]
    freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    out = np.empty((len(p), dim))
    out[:, 0::2], out[:, 1::2] = np.sin(p * freq), np.cos(p * freq)
    return out


@pytest.mark.parametrize("encoding", ["interleaved", "concatenated", "book", "tutorial"])
@pytest.mark.parametrize("precision", ["float", "double"])
def test_equals_cli_pe_npy_bitwise(tmp_path, cli, encoding, precision):
    out = tmp_path / "pe.npy"
    cli("pe", "--len", 300, "--dim", 64, "--start", 17, "--base", 5000, "--encoding", encoding,
        "--precision", precision, "--format", "npy", "-o", out)
    expected = np.load(out)
    dtype = np.float32 if precision == "float" else np.float64
    got = posvec.positional_encoding(300, 64, encoding=encoding, base=5000, start=17, dtype=dtype)
    assert got.dtype == expected.dtype == dtype and got.shape == (300, 64)
    assert got.tobytes() == expected.tobytes()


def test_interleaved_matches_the_formula():
    got = posvec.positional_encoding(2048, 128, dtype=np.float64)
    assert np.allclose(got, reference_pe(range(2048), 128), atol=1e-10, rtol=0)
    f32 = posvec.positional_encoding(2048, 128)
    assert np.array_equal(f32, got.astype(np.float32))
    late = posvec.positional_encoding(3, 16, start=10**6, dtype=np.float64)
    assert np.allclose(late, reference_pe(range(10**6, 10**6 + 3), 16), atol=1e-9, rtol=0)


def test_relative_shift_moves_positions():
    pe = posvec.positional_encoding(80, 32, dtype=np.float64)
    for k in (1, 5, -3):
        m = posvec.relative_shift(k, 32)
        assert m.shape == (32, 32)
        for p in (3, 10, 40):
            assert np.allclose(m @ pe[p], pe[p + k], atol=1e-12)
    assert np.allclose(posvec.relative_shift(0, 8), np.eye(8))


def test_sizes_are_refused_before_any_work():
    # Before: relative_shift had no size check (dim 100,000 asked for 80 GB) and a wide
    # encoder built its frequency tables before any check.
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    dims = [10**6] + ([100_000] if memory < 80e9 else [])
    for dim in dims:
        with pytest.raises(ValueError, match=f"a {dim} x {dim} matrix of float64 needs .* GB, "
                                             "more than this machine's"):
            posvec.relative_shift(1, dim)
    with pytest.raises(ValueError, match="d_model 2000000000 needs .* GB for its frequency tables"):
        posvec.positional_encoding(1, 2_000_000_000)
    with pytest.raises(ValueError, match="needs .* GB"):
        posvec.positional_encoding(10**8, 10**8)


def test_bad_options_raise_value_error():
    with pytest.raises(ValueError, match="even"):
        posvec.positional_encoding(4, 7)
    with pytest.raises(ValueError, match="encoding"):
        posvec.positional_encoding(4, 8, encoding="spiral")
    with pytest.raises(ValueError, match="dtype"):
        posvec.positional_encoding(4, 8, dtype=np.int32)
    with pytest.raises(ValueError):
        posvec.relative_shift(2, 8, encoding="tutorial")


@pytest.fixture
def kv():
    words = ["the", "black", "cat", "sat", "brown", "dog", "."]
    k = posvec.KeyedVectors(16)
    k.add_vectors(words, random_vectors(words, 16, seed=9))
    return k


def test_encode_is_scaled_vectors_plus_pe(kv):
    x, padding = posvec.encode(kv, ["The black cat sat.", ["brown", "dog"]], start=3)
    assert x.shape == (2, 5, 16) and x.dtype == np.float32
    assert padding.tolist() == [[False] * 5, [False, False, True, True, True]]
    pe = reference_pe(range(3, 8), 16)
    tokens = ["the", "black", "cat", "sat", "."]
    want = kv[tokens].astype(np.float64) * 4.0 + pe
    assert np.allclose(x[0], want, rtol=1e-6, atol=1e-6)
    assert np.allclose(x[1, :2], kv[["brown", "dog"]] * 4.0 + pe[:2], rtol=1e-6, atol=1e-6)
    assert not x[1, 2:].any()  # padding rows stay zero
    y, _ = posvec.encode(kv, [["cat"]], scale=1.5, encoding="book", dtype=np.float64)
    book = posvec.positional_encoding(1, 16, encoding="book", dtype=np.float64)
    assert np.allclose(y[0, 0], kv["cat"] * 1.5 + book[0], atol=1e-12)


def test_encode_unknown_words(kv):
    with pytest.raises(KeyError, match="unk='zero'"):
        posvec.encode(kv, ["the red cat"])
    x, _ = posvec.encode(kv, ["the red cat"], unk="zero")
    assert np.allclose(x[0, 1], reference_pe([1], 16)[0], atol=1e-6)


def test_encode_unknown_words_as_the_mean_vector(kv):
    x, padding = posvec.encode(kv, ["the red cat", ["zebra"]], unk="token", dtype=np.float64)
    assert padding.tolist() == [[False] * 3, [False, True, True]]
    # The mean of every vector, summed in float64, rounded to float32 like a stored row.
    words = kv.index_to_key
    mean = (sum(kv[w].astype(np.float64) for w in words) / len(words)).astype(np.float32)
    pe = reference_pe(range(3), 16)
    want = np.stack([kv["the"], mean, kv["cat"]]).astype(np.float64) * 4.0 + pe
    assert np.allclose(x[0], want, atol=1e-6, rtol=0)
    assert np.allclose(x[1, 0], mean.astype(np.float64) * 4.0 + pe[0], atol=1e-6, rtol=0)
    assert not x[1, 1:].any()
    # Known words are untouched by the option.
    plain, _ = posvec.encode(kv, ["the cat"], dtype=np.float64)
    assert np.array_equal(posvec.encode(kv, ["the cat"], unk="token", dtype=np.float64)[0], plain)


@pytest.mark.parametrize("unk", ["skip", "Token", "", None])
def test_encode_bad_unk_names_the_choices(kv, unk):
    with pytest.raises(ValueError, match="choose 'error', 'zero' or 'token'"):
        posvec.encode(kv, ["the cat"], unk=unk)


def test_encode_unk_token_equals_cli(tmp_path, cli, kv):
    kv.save_word2vec_format(tmp_path / "v.bin")
    cli("encode", tmp_path / "v.bin", "--sentence", "the red cat", "--sentence", "zebra",
        "--unk", "token", "--format", "npy", "-o", tmp_path / "e.npy")
    x, _ = posvec.encode(kv, ["the red cat", "zebra"], unk="token")
    assert x.tobytes() == np.load(tmp_path / "e.npy").tobytes()


def test_encode_equals_cli(tmp_path, cli, kv):
    kv.save_word2vec_format(tmp_path / "v.bin")
    cli("encode", tmp_path / "v.bin", "--sentence", "the black cat sat .", "--sentence", "brown dog",
        "--format", "npy", "-o", tmp_path / "e.npy")
    x, _ = posvec.encode(kv, ["the black cat sat .", "brown dog"])
    assert x.tobytes() == np.load(tmp_path / "e.npy").tobytes()
