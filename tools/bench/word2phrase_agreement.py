#!/usr/bin/python3
"""posvec phrases --scoring word2phrase against word2phrase.c itself: N passes of each over
the same pre-tokenized corpus (word2phrase run again on its own output, as its demo does;
posvec with --passes N), the same threshold and min_count each pass. Prints whether the
rewritten corpora are the same token for token, how many distinct joined tokens of two,
three and more words each wrote, and the most frequent phrases of three or more words the
last pass joined, with the pair it joined and the pair's score under word2phrase's rule
(computed here, in single precision, from the counts of the pass before).

word2phrase.c is built as tools/bench/bench_phrases.py builds it (npm's `word2vec` package).

    /usr/bin/python3 tools/bench/word2phrase_agreement.py --posvec build/posvec \
        --corpus tools/bench/data/brown.txt [--passes 2] [--threshold 100] [--top 15]
"""
import argparse
import collections
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_phrases import HERE, word2phrase  # noqa: E402


def tokens(path):
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f if line.split()]


def joined(lines):
    """Distinct joined tokens by their number of words (2, 3, 4+)."""
    by = collections.defaultdict(set)
    for line in lines:
        for t in line:
            n = t.count("_") + 1
            if n > 1:
                by[min(n, 4)].add(t)
    return by


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--threshold", type=float, default=100)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--cache", default=os.path.join(HERE, "data", "word2vec-npm"))
    a = ap.parse_args()
    w2p = word2phrase(a.cache)
    with tempfile.TemporaryDirectory() as d:
        src = a.corpus
        for k in range(a.passes):
            dst = os.path.join(d, "w2p%d.txt" % k)
            subprocess.run([w2p, "-train", src, "-output", dst, "-threshold", str(a.threshold),
                            "-min-count", str(a.min_count), "-debug", "0"], check=True,
                           stdout=subprocess.DEVNULL)
            src = dst
        theirs = tokens(src)
        # posvec one pass at a time, to keep the last pass's input.
        src, before = a.corpus, None
        for k in range(a.passes):
            dst = os.path.join(d, "posvec%d.txt" % k)
            subprocess.run([a.posvec, "-q", "phrases", src, "--pretokenized", "--scoring",
                            "word2phrase", "--threshold", str(a.threshold), "--min-count",
                            str(a.min_count), "-o", dst], check=True)
            before, src = src, dst
        ours, last_input = tokens(src), tokens(before)
    print(f"corpus: {a.corpus}; {a.passes} passes, threshold {a.threshold:g}, "
          f"min_count {a.min_count}")
    print(f"rewritten corpora: {'the same, token for token' if ours == theirs else 'DIFFER'} "
          f"({sum(map(len, ours))} tokens in {len(ours)} lines)")
    a_by, b_by = joined(ours), joined(theirs)
    for n, label in ((2, "2 words"), (3, "3 words"), (4, "4 or more")):
        same = len(a_by[n] & b_by[n])
        print(f"distinct joined tokens of {label}: posvec {len(a_by[n])}, word2phrase "
              f"{len(b_by[n])}, in both {same}")
    # The last pass's counts (word2phrase's: every word, and every adjacent pair across
    # line ends, under its joined string) and the pairs it joined into 3+ word phrases.
    counts, words, last = collections.Counter(), 0, None
    for line in last_input:
        for t in line:
            counts[t] += 1
            words += 1
            if last is not None:
                counts[last + "_" + t] += 1
            last = t
    formed = collections.Counter()
    for before_line, after_line in zip(last_input, ours):
        i = 0
        for t in after_line:
            if t == before_line[i]:
                i += 1
            else:  # t joins before_line[i] and before_line[i + 1]
                formed[(before_line[i], before_line[i + 1])] += 1
                i += 2
    f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]  # noqa: E731
    rows = []
    for (x, y), n in formed.items():
        if (x + "_" + y).count("_") < 2:
            continue
        pa, pb, pab = counts[x], counts[y], counts[x + "_" + y]
        score = f32(f32(f32(f32(pab - a.min_count) / f32(pa)) / f32(pb)) * f32(words))
        rows.append((n, x + "_" + y, x, y, score))
    rows.sort(key=lambda r: (-r[0], r[1]))
    print(f"phrases of 3+ words the last pass joined: {len(rows)}; the {min(a.top, len(rows))} "
          f"most frequent (times joined, the pair, its score):")
    for n, phrase, x, y, score in rows[:a.top]:
        print(f"{phrase:32s} {n:5d}  {x} + {y}  {score:.1f}")


if __name__ == "__main__":
    main()
