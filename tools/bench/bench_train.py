#!/usr/bin/python3
"""posvec train against gensim 4 Word2Vec and fastText (skip-gram, -minn 0 -maxn 0)
on the Brown corpus, same hyperparameters (window 5, negative 5, sample 1e-4,
min-count 5, lr 0.025, 5 epochs): words/s, wall time and peak RSS of each whole
training process, and quality of the vectors scored by the same gensim code
(eval_vectors.py). Prints ratios posvec/peer. Run through bench-train.sh."""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from bench_common import time_v

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"


def timed(cmd):
    """Runs cmd under /usr/bin/time -v; returns (wall seconds, peak RSS MiB, stdout)."""
    wall, rss, r = time_v(cmd, "bench-train")
    return wall, rss, r.stdout


def count_words(path):
    n = 0
    with open(path, "rb") as f:
        for line in f:
            n += len(line.split())
    return n


def shuffled_copies(src, dst, seed, copies, first_in_order):
    """`copies` copies of src's lines in dst, each in a random order drawn from one generator
    (fixed seed), the first left in file order when first_in_order; kept if dst exists."""
    if os.path.exists(dst) and os.path.getsize(dst) > 0:
        return
    with open(src, encoding="utf-8") as f:
        lines = f.readlines()
    rng = random.Random(seed)
    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        for i in range(copies):
            copy = lines[:]
            if i > 0 or not first_in_order:
                rng.shuffle(copy)
            out.writelines(copy)
    os.replace(tmp, dst)


def make_x16(src, dst, seed=16):
    """16 copies of src; lines shuffled (fixed seed) in every copy after the first."""
    shuffled_copies(src, dst, seed, 16, True)


def train(trainer, corpus, out, dim, seed, threads, epochs, posvec, gensim_mode="file"):
    if trainer == "posvec":
        cmd = [posvec, "--quiet", "train", corpus, "--pretokenized", "-o", out, "--dim", str(dim),
               "--window", "5", "--negative", "5", "--sample", "1e-4", "--min-count", "5",
               "--alpha", "0.025", "--epochs", str(epochs), "--threads", str(threads),
               "--seed", str(seed)]
        vec = out
    elif trainer == "gensim":
        cmd = [PY, os.path.join(HERE, "gensim_train.py"), corpus, out, str(dim), str(epochs),
               str(threads), str(seed), gensim_mode]
        vec = out
    else:
        prefix = out[:-4]
        cmd = ["fasttext", "skipgram", "-input", corpus, "-output", prefix, "-dim", str(dim),
               "-ws", "5", "-neg", "5", "-t", "1e-4", "-minCount", "5", "-lr", "0.025",
               "-epoch", str(epochs), "-thread", str(threads), "-minn", "0", "-maxn", "0",
               "-seed", str(seed), "-verbose", "0"]
        vec = prefix + ".vec"
    wall, rss, _ = timed(cmd)
    return wall, rss, vec


def evaluate(vec, data):
    r = subprocess.run([PY, os.path.join(HERE, "eval_vectors.py"), vec, data], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit("bench-train: evaluation failed for %s\n%s" % (vec, r.stderr[-2000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="Brown only, dim 100, one seed")
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--data", default=os.environ.get("POSVEC_SHARED_DATA",
                                                     os.path.join(ROOT, "..", "shared", "data")),
                    help="directory with questions-words.txt, wordsim353.tsv, simlex999.txt")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--trainers", default="posvec,gensim,fasttext")
    args = ap.parse_args()
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")], check=True)
    trainers = args.trainers.split(",")
    dims = [100] if args.quick else [100, 512]
    seeds = [1] if args.quick else [1, 2, 3]
    has_data = os.path.exists(os.path.join(args.data, "questions-words.txt"))
    if not has_data:
        print("bench-train: no evaluation data in %s (pass --data DIR): quality not measured"
              % args.data)
    work = tempfile.mkdtemp(prefix="posvec-bench-train-")
    brown_words = count_words(brown)
    print("bench-train: Brown %d words, %d threads, %d epochs; %s" %
          (brown_words, args.threads, args.epochs, "quick" if args.quick else "full"))
    print("(timings on a shared machine are rough; words/s = corpus words x epochs / wall time "
          "of the whole process, vocabulary pass and output included)")
    results = {}
    for dim in dims:
        for t in trainers:
            runs = []
            for seed in seeds:
                out = os.path.join(work, "%s-%d-%d.vec" % (t, dim, seed))
                wall, rss, vec = train(t, brown, out, dim, seed, args.threads, args.epochs,
                                       args.posvec)
                q = evaluate(vec, args.data) if has_data else {}
                runs.append({"wall": wall, "rss": rss, **q})
                os.remove(vec)
            results[("brown", dim, t)] = runs
            summary(t, "brown", dim, runs, brown_words * args.epochs)
        ratios(results, "brown", dim, trainers, brown_words * args.epochs, quality=has_data)
    if not args.quick:
        x16 = os.path.join(HERE, "data", "brown-x16.txt")
        make_x16(brown, x16)
        x16_words = brown_words * 16
        for dim in dims:
            for t in trainers:
                out = os.path.join(work, "%s-x16-%d.vec" % (t, dim))
                wall, rss, vec = train(t, x16, out, dim, 1, args.threads, 1, args.posvec)
                os.remove(vec)
                results[("x16", dim, t)] = [{"wall": wall, "rss": rss}]
                summary(t, "brown-x16 (1 epoch)", dim, results[("x16", dim, t)], x16_words)
            ratios(results, "x16", dim, trainers, x16_words, quality=False)
    os.rmdir(work) if not os.listdir(work) else None


def summary(trainer, corpus, dim, runs, words):
    wall = statistics.mean(r["wall"] for r in runs)
    rss = max(r["rss"] for r in runs)
    line = "%-8s %-20s dim %3d  wall %7.1f s  %9.0f words/s  peak RSS %7.1f MiB" % (
        trainer, corpus, dim, wall, words / wall, rss)
    if "analogy" in runs[0]:
        for k in ("analogy", "wordsim353", "simlex999"):
            vals = [r[k] for r in runs]
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            line += "  %s %.4f±%.4f" % (k, statistics.mean(vals), sd)
    print(line, flush=True)


def ratios(results, corpus, dim, trainers, words, quality):
    if "posvec" not in trainers:
        return
    mine = results[(corpus, dim, "posvec")]
    for peer in trainers:
        if peer == "posvec":
            continue
        theirs = results[(corpus, dim, peer)]
        speed = statistics.mean(r["wall"] for r in theirs) / statistics.mean(r["wall"] for r in mine)
        rss = max(r["rss"] for r in mine) / max(r["rss"] for r in theirs)
        line = "  ratio posvec/%s (%s, dim %d): speed %.2fx, peak RSS %.2fx" % (
            peer, corpus, dim, speed, rss)
        if quality:
            for k in ("analogy", "wordsim353", "simlex999"):
                a = statistics.mean(r[k] for r in mine)
                b = statistics.mean(r[k] for r in theirs)
                line += ", %s %.2f" % (k, a / b if b else float("nan"))
        print(line, flush=True)


if __name__ == "__main__":
    main()
