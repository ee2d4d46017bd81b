"""posvec.study: the study's numbers, checked against the package's own pieces
and the formulas; results and figures display in Jupyter; the report is written."""

import math
import os

import numpy as np
import pytest

import posvec
from conftest import CORPUS


def book_pe(position, dim, base=10000.0):
    """The study's loop: column i (even) holds sin and column i + 1 cos of p / base^(2i/d)."""
    out = np.empty(dim)
    for i in range(0, dim, 2):
        angle = position / base ** (2 * i / dim)
        out[i], out[i + 1] = math.sin(angle), math.cos(angle)
    return out


def cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def result():
    return posvec.study(corpus=CORPUS, dim=64, epochs=2)


def test_numbers_match_an_independent_computation(result):
    assert result.positional_similarity == pytest.approx(cos(book_pe(2, 64), book_pe(10, 64)), abs=1e-12)
    # the same training through Word2Vec (the study's settings: skip-gram, window 5, min-count 1)
    kv = posvec.Word2Vec(corpus_file=CORPUS, vector_size=64, window=5, min_count=1, epochs=2,
                         workers=1, seed=1, progress=False).wv
    a, b = kv["black"].astype(np.float64), kv["brown"].astype(np.float64)
    assert result.word_similarity == pytest.approx(cos(a, b), abs=1e-12)
    assert result.combined_similarity == pytest.approx(
        cos(a * 8 + book_pe(2, 64), b * 8 + book_pe(10, 64)), abs=1e-9)
    assert len(result.pairs) == 2  # one pair, two encodings
    assert result.settings["trained"] is True


def test_the_published_positional_value(tmp_path):
    kv = posvec.KeyedVectors(512)
    rng = np.random.default_rng(0)
    kv.add_vectors(["black", "brown"], rng.standard_normal((2, 512)))
    kv.save_word2vec_format(tmp_path / "v.bin")
    r = posvec.study(vectors=tmp_path / "v.bin", encodings="book")
    assert f"{r.positional_similarity:.7f}" == "0.8600013"
    assert r.settings["trained"] is False


def test_display_in_jupyter_and_report(result, tmp_path):
    html = result._repr_html_()
    assert html.startswith("<pre>") and "black" in html
    figures = result.figures
    assert len(figures) >= 5
    for f in figures:
        svg = f._repr_svg_()
        assert "<svg" in svg and svg.rstrip().endswith("</svg>") and f.title
    out = result.report(tmp_path / "report")
    names = set(os.listdir(out))
    assert {"index.html", "results.json"} <= names
    assert {f.file for f in figures} <= names
    assert "distance_profile" in result.data


def test_default_corpus_is_the_shipped_one():
    default = posvec.study(dim=16, epochs=1)
    explicit = posvec.study(corpus=CORPUS, dim=16, epochs=1)
    assert default.word_similarity == explicit.word_similarity
    assert default.settings["source"].endswith("posvec-corpus.txt")


def test_errors():
    with pytest.raises(ValueError, match="zebra"):
        posvec.study(corpus=CORPUS, dim=16, epochs=1, pairs=[("black", 2), ("zebra", 10)])
    with pytest.raises(ValueError):
        posvec.study(corpus=CORPUS, dim=16, epochs=1, encodings=("spiral",))
    with pytest.raises(FileNotFoundError):
        posvec.study(corpus="/no/such/file.txt")


def test_a_phrase_table_lets_a_pair_name_a_phrase(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("The black cat in New York sat near the brown dog in New York.\n" * 20)
    table = tmp_path / "t.tsv"
    table.write_text("# posvec phrases: min_count=5 threshold=10 scoring=default delimiter=_\n"
                     "# connector_words:\nnew_york\t40\t99.5\n")
    pairs = [("black", 2), ("new_york", 5)]
    with pytest.raises(ValueError, match="new_york"):
        posvec.study(corpus=corpus, dim=8, epochs=1, pairs=pairs)
    r = posvec.study(corpus=corpus, dim=8, epochs=1, pairs=pairs, phrases=table)
    assert r.pairs[0]["b"] == "new_york" and r.pairs[0]["position_b"] == 5
    plain = posvec.study(corpus=corpus, dim=8, epochs=1, pairs=[("black", 2), ("cat", 3)])
    assert r.settings["corpus_tokens"] == plain.settings["corpus_tokens"] - 2 * 20
