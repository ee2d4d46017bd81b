"""posvec phrases against gensim 4's Phrases (Debian's python3-gensim), an independent
implementation of the same rules: the same corpus and settings give the same phrases with
the same scores and the same rewritten sentences, for the default and npmi scorers, with
and without connector words, and with max_vocab_size pruning. A small corpus is generated
here (collocations among random words); Brown too when tools/bench/data/brown.txt has been
fetched. Skips when gensim or the CLI is absent."""

import os
import re
import subprocess

import numpy as np
import pytest

phrases_mod = pytest.importorskip("gensim.models.phrases",
                                  reason="gensim is not installed (python3-gensim)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def cli():
    exe = os.environ.get("POSVEC_CLI")
    if not exe or not os.path.exists(exe):
        pytest.skip("the posvec command line is not built (POSVEC_CLI unset)")
    return exe


def generated_corpus():
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    colloc = [["new", "york"], ["machine", "learning"], ["bank", "of", "america"],
              ["the", "white", "house"], ["san", "francisco", "bay"]]
    connectors = ["the", "of", "and", "a", "in"]
    sentences = []
    for _ in range(3000):
        s = []
        for _ in range(rng.integers(3, 15)):
            r = rng.random()
            if r < 0.08:
                s += colloc[rng.integers(len(colloc))]
            elif r < 0.25:
                s.append(connectors[rng.integers(len(connectors))])
            else:
                s.append(words[int(rng.zipf(1.3)) % len(words)])
        sentences.append(s)
    return sentences


def run_posvec(cli, tmp_path, sentences, args):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    out, table = tmp_path / "out.txt", tmp_path / "table.tsv"
    subprocess.run([cli, "-q", "phrases", str(corpus), "--pretokenized", "-o", str(out),
                    "--save-table", str(table)] + args, check=True)
    found = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue  # the settings and the connector words
        phrase, count, score = line.split("\t")
        found[phrase] = float(score)
    return found, [line.split(" ") for line in out.read_text(encoding="utf-8").splitlines()]


CASES = {
    "default": ({}, []),
    "npmi": ({"scoring": "npmi", "threshold": 0.3}, ["--scoring", "npmi", "--threshold", "0.3"]),
    "connectors": ({"connector_words": phrases_mod.ENGLISH_CONNECTOR_WORDS, "threshold": 5.0},
                   ["--connector-words", "english", "--threshold", "5"]),
    "npmi-connectors": ({"scoring": "npmi", "threshold": 0.2,
                         "connector_words": phrases_mod.ENGLISH_CONNECTOR_WORDS},
                        ["--scoring", "npmi", "--threshold", "0.2", "--connector-words", "english"]),
    # 7,348 unigrams and bigrams unpruned: 6,000 prunes them, and a phrase survives.
    "pruned": ({"max_vocab_size": 6000, "min_count": 3}, ["--max-vocab", "6000", "--min-count", "3"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_phrases_equal_gensim(cli, tmp_path, case):
    kwargs, args = CASES[case]
    sentences = generated_corpus()
    model = phrases_mod.Phrases(sentences, **kwargs)
    want = model.export_phrases()
    got, rewritten = run_posvec(cli, tmp_path, sentences, args)
    assert len(want) > 0
    assert set(got) == set(want)
    for phrase, score in want.items():
        assert got[phrase] == pytest.approx(score, rel=1e-12, abs=0), phrase
    expected = [model[s] for s in sentences]
    assert rewritten == [s for s in expected if s]


def test_brown_phrases_equal_gensim(cli, tmp_path):
    brown = os.path.join(ROOT, "tools", "bench", "data", "brown.txt")
    if not os.path.exists(brown):
        pytest.skip("Brown is not fetched (tools/scripts/fetch-brown.sh)")
    with open(brown, encoding="utf-8") as f:
        sentences = [line.split() for line in f if line.split()][:20000]
    model = phrases_mod.Phrases(sentences)
    got, rewritten = run_posvec(cli, tmp_path, sentences, [])
    want = model.export_phrases()
    assert set(got) == set(want)
    assert rewritten == [model[s] for s in sentences]


def test_bad_settings_are_one_line(cli, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b\n")
    for args, says in ((["--scoring", "npmi", "--threshold", "2"], "between -1 and 1"),
                       (["--threshold", "0"], "above 0"),
                       (["--min-count", "0"], "--min-count"),
                       (["--connector-words", str(tmp_path / "missing")], "cannot open")):
        r = subprocess.run([cli, "phrases", str(corpus), "--pretokenized", "-o",
                            str(tmp_path / "o.txt")] + args, capture_output=True, text=True)
        assert r.returncode != 0
        assert says in r.stderr
        assert r.stderr.count("\n") == 1
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    r = subprocess.run([cli, "phrases", str(empty), "--pretokenized", "-o", str(tmp_path / "o.txt")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "no words" in r.stderr
    assert not (tmp_path / "o.txt").exists()


def test_python_phrases_equal_gensim_and_feed_word2vec(tmp_path):
    posvec = pytest.importorskip("posvec", reason="the posvec Python package is not built")
    sentences = generated_corpus()
    for kwargs in ({}, {"scoring": "npmi", "threshold": 0.3},
                   {"connector_words": phrases_mod.ENGLISH_CONNECTOR_WORDS, "threshold": 5.0},
                   {"max_vocab_size": 6000, "min_count": 3}):
        theirs = phrases_mod.Phrases(sentences, **kwargs)
        ours = posvec.Phrases(sentences, **kwargs)
        assert len(ours) == len(theirs.vocab)
        assert ours.corpus_word_count == theirs.corpus_word_count
        want, got = theirs.export_phrases(), ours.export_phrases()
        assert set(got) == set(want)
        for phrase in want:
            assert got[phrase] == pytest.approx(want[phrase], rel=1e-12, abs=0)
        assert [ours[s] for s in sentences[:500]] == [theirs[s] for s in sentences[:500]]
        assert list(ours[sentences[:50]]) == list(theirs[sentences[:50]])
        frozen = ours.freeze()
        assert [frozen[s] for s in sentences[:500]] == [theirs.freeze()[s] for s in sentences[:500]]
        frozen.save(tmp_path / "t.tsv")
        loaded = posvec.FrozenPhrases.load(tmp_path / "t.tsv")
        assert [loaded[s] for s in sentences[:500]] == [frozen[s] for s in sentences[:500]]
        assert loaded.connector_words == frozenset(kwargs.get("connector_words", ()))
    # add_vocab in two parts counts as one call does (no pruning here).
    half = len(sentences) // 2
    parts = posvec.Phrases(sentences[:half])
    parts.add_vocab(sentences[half:])
    assert parts.export_phrases() == posvec.Phrases(sentences).export_phrases()
    # The rewritten corpus trains.
    frozen = posvec.Phrases(sentences).freeze()
    model = posvec.Word2Vec(list(frozen[sentences]), vector_size=8, min_count=1, epochs=1,
                            workers=1)
    assert "new_york" in model.wv.key_to_index
    with pytest.raises(NotImplementedError, match="freeze"):
        ours.save(tmp_path / "x")
    with pytest.raises(ValueError, match="between -1 and 1"):
        posvec.Phrases(sentences, scoring="npmi", threshold=3)


def test_train_phrases_joins_as_the_table_says(cli, tmp_path):
    sentences = generated_corpus()
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    subprocess.run([cli, "-q", "phrases", str(corpus), "--pretokenized", "-o",
                    str(tmp_path / "joined.txt"), "--save-table", str(tmp_path / "t.tsv")],
                   check=True)
    common = ["--pretokenized", "--min-count", "1", "--dim", "8", "--epochs", "1", "-t", "1",
              "--format", "text"]
    subprocess.run([cli, "-q", "train", str(corpus), "--phrases", str(tmp_path / "t.tsv"), "-o",
                    str(tmp_path / "a.txt")] + common, check=True)
    subprocess.run([cli, "-q", "train", str(tmp_path / "joined.txt"), "-o",
                    str(tmp_path / "b.txt")] + common, check=True)
    # Joining on the fly trains what the rewritten corpus trains, bit for bit.
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert b"\nnew_york " in (tmp_path / "a.txt").read_bytes()
    (tmp_path / "bad.tsv").write_text("not a table\n")
    r = subprocess.run([cli, "train", str(corpus), "--phrases", str(tmp_path / "bad.tsv"), "-o",
                        str(tmp_path / "c.txt.out")] + common, capture_output=True, text=True)
    assert r.returncode != 0
    assert "not a phrase table" in r.stderr and r.stderr.count("\n") == 1


def test_a_word2phrase_table_loads_with_its_scoring_and_rewrites_as_the_cli(cli, tmp_path):
    import posvec
    sentences = generated_corpus()
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    subprocess.run([cli, "-q", "phrases", str(corpus), "--pretokenized", "--scoring",
                    "word2phrase", "--threshold", "50", "-o", str(tmp_path / "joined.txt"),
                    "--save-table", str(tmp_path / "t.tsv")], check=True)
    frozen = posvec.FrozenPhrases.load(str(tmp_path / "t.tsv"))
    assert frozen.scoring == "word2phrase"
    joined = [line.split() for line in (tmp_path / "joined.txt").read_text().splitlines()]
    assert any("_" in t for s in joined for t in s)
    assert [frozen[s] for s in sentences if s] == joined


def peak_rss_mib(cmd):
    """Runs cmd; its peak resident memory in MiB, as /usr/bin/time reports it (a child
    forked from this interpreter would start counting at the interpreter's size)."""
    if not os.path.exists("/usr/bin/time"):
        pytest.skip("/usr/bin/time is not installed (Debian's time package)")
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, check=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024.0


def test_dry_run_bounds_the_memory_before_reading(cli, tmp_path):
    """--dry-run prints the bound --max-vocab sets without reading the corpus (nor standard
    input) or writing; a run whose counts pass the limit stays under the bound."""
    rng = np.random.default_rng(9)
    words = [f"v{i}" for i in range(20000)]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(" ".join(words[j] for j in rng.integers(0, len(words), 12))
                                for _ in range(20000)) + "\n")
    out = tmp_path / "o.txt"
    args = ["--pretokenized", "-o", str(out), "--threads", "2", "--max-vocab", "100000"]
    r = subprocess.run([cli, "phrases", str(corpus), "-"] + args + ["--dry-run"],
                       stdin=subprocess.PIPE, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not out.exists()
    size = corpus.stat().st_size / 2**20
    assert f"corpus: 1 file, {size:.1f} MiB on disk (and standard input, not counted)" in r.stdout
    m = re.search(r"memory: at most ([\d.]+) (MiB|GiB)", r.stdout)
    bound = float(m.group(1)) * (1024 if m.group(2) == "GiB" else 1)
    # Three tables (two threads and the merge) of 100,000 keys: the bound grows with them.
    assert bound >= 3 * 100000 * 32 / 2**20
    # 240,000 words, about 236,000 distinct pairs: the threads pass the limit.
    floor = peak_rss_mib([cli, "--version"])
    used = peak_rss_mib([cli, "-q", "phrases", str(corpus)] + args)
    assert out.exists()
    assert used - floor <= bound, (used, floor, bound)
