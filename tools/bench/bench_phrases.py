#!/usr/bin/python3
"""posvec phrases against gensim's Phrases on the same pre-tokenized corpus, one pass,
default settings, in one run: wall time and peak memory of each (median of --runs, each a
fresh process: reading the corpus, counting, and writing or building the rewritten
sentences), the ratio, and whether the rewritten corpora are equal.

    /usr/bin/python3 tools/bench/bench_phrases.py --posvec build/posvec --corpus tools/bench/data/brown.txt [--runs 3]
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import time_v  # noqa: E402

GENSIM = r"""
import sys
from gensim.models.phrases import Phrases
sentences = [line.split() for line in open(sys.argv[1], encoding="utf-8") if line.split()]
model = Phrases(sentences)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for s in sentences:
        out.write(" ".join(model[s]) + "\n")
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "gensim_phrases.py")
        with open(script, "w") as f:
            f.write(GENSIM)
        ours, theirs = os.path.join(d, "posvec.txt"), os.path.join(d, "gensim.txt")
        results = {"posvec": [], "gensim": []}
        for _ in range(a.runs):  # in turn, so both see the machine alike
            results["posvec"].append(time_v([a.posvec, "-q", "phrases", a.corpus, "--pretokenized",
                                             "-o", ours], "posvec")[:2])
            results["gensim"].append(time_v(["/usr/bin/python3", script, a.corpus, theirs],
                                            "gensim")[:2])
        same = open(ours, encoding="utf-8").read() == open(theirs, encoding="utf-8").read()
    words = sum(len(line.split()) for line in open(a.corpus, encoding="utf-8"))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v))
           for k, v in results.items()}
    print(f"corpus: {a.corpus}, {words} words; {a.runs} runs each, medians")
    print(f"{'tool':8s} {'wall s':>8s} {'peak MiB':>9s}")
    for k in ("posvec", "gensim"):
        print(f"{k:8s} {med[k][0]:8.2f} {med[k][1]:9.1f}")
    print(f"posvec is {med['gensim'][0] / med['posvec'][0]:.1f}x gensim's speed; "
          f"rewritten corpora {'equal' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
