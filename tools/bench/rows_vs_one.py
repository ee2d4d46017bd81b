#!/usr/bin/python3
"""Where distributed training loses what one process learns: row by row, against one process.

Trains full-state models (.posvec) on Brown x16 (every copy shuffled, bench_quality.py's corpus and
settings, 1 epoch unless --epochs): one process seed 1 (the reference), one process seed 2 (the
noise floor: how far two one-process runs are from each other), and N ranks seed 1 for every N
of --ranks, plus any --variant LABEL=FLAGS at --variant-ranks ranks. Then, per frequency band
(word rank: the top 256, 256-4k, 4k-32k, rarer) and per matrix (input: wv.vectors; output:
syn1neg), against the reference:
  - cos: the mean cosine of each row to the reference's row, after an orthogonal Procrustes
    rotation fitted on the 4,096 most frequent rows (separately for each matrix);
  - norm: the mean ratio of the row's norm to the reference row's norm;
  - nn@10: the mean overlap of the top-10 nearest neighbours by cosine (input matrix; up to
    --sample words of each band, the same words for every model).
And per band, from the synchronisation schedule (distributed.md): the occurrences per rank a
row is trained between two of its exchanges (the median over the band; input row: its word's
count times word2vec's keep probability; output row: that plus its draws as a noise word) and
the factor the bounded rule puts on the ranks' summed change when all N changed it.
Models and figures are cached in tools/bench/out/rows/ (by the binary's hash and the settings).
--dots counts, instead, the dot products one process computes a corpus word (the payload of a
column-partitioned mode, distributed.md): it draws word2vec's subsampling and window shrinking
over Brown's lines (each of the x16 corpus's copies has the same lines and the same keep
probabilities), --dots-draws times, and counts the (context, centre) pairs, the classic kernel's
dots (1 + negative a pair) and the batched kernel's cells for blocks of --combine centre words
sharing --block-negatives noise words: all cells (distinct contexts x (distinct centres + shared
negatives)) and those that carry a weight (a context of that centre, or any shared negative).
Usage: PYTHONPATH=/path/to/posvec/python /usr/bin/python3 tools/bench/rows_vs_one.py
       [--posvec PATH] [--ranks 4,8] [--epochs 1] [--variant "LABEL=--sync-words 10000"]...
       /usr/bin/python3 tools/bench/rows_vs_one.py --dots [--dots-draws 4]"""
import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench_mpi import COMMON, MPI_TCP, parse_sync, sha  # noqa: E402
from bench_quality import corpus_path, with_extra  # noqa: E402

BANDS = ((0, 256, "top 256"), (256, 4096, "256-4k"), (4096, 32768, "4k-32k"),
         (32768, None, "32k-"))
FIT_ROWS = 4096
SATURATION = 100.0  # occurrences: the bounded rule's constant (distributed.md)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def train(args, ranks, seed, extra, out_dir, bin_sha, corpus):
    key = hashlib.sha256(json.dumps([os.path.basename(corpus), args.dim, args.epochs, COMMON,
                                     ranks, seed, list(extra)]).encode()).hexdigest()[:12]
    model = os.path.join(out_dir, "%s-%s.posvec" % (bin_sha, key))
    meta = model + ".json"
    if os.path.exists(model) and os.path.exists(meta):
        with open(meta) as f:
            return model, json.load(f)
    cmd = [args.posvec, "train", corpus, "-o", model + ".tmp.posvec", "--dim", str(args.dim),
           "--epochs", str(args.epochs), "--threads", "1", "--seed", str(seed)] + \
        with_extra(COMMON, extra)
    if ranks > 1:
        flags = MPI_TCP + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        cmd = [args.mpirun, "-np", str(ranks)] + flags + cmd
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("rows_vs_one: command failed (exit %d): %s\n%s" %
                 (r.returncode, " ".join(cmd), r.stderr[-3000:]))
    info = {"cmd": " ".join(cmd).replace(model + ".tmp.posvec", "X.posvec"),
            "wall": time.monotonic() - start}
    info.update(parse_sync(r.stderr, ranks))
    os.replace(model + ".tmp.posvec", model)
    with open(meta, "w") as f:
        json.dump(info, f, indent=1)
    log("rows_vs_one: trained %d rank(s), seed %d %s in %.1f s" % (ranks, seed, " ".join(extra),
                                                                   info["wall"]))
    return model, info


def load(path):
    import posvec
    m = posvec.Word2Vec.load(path)
    return (list(m.wv.index_to_key), np.asarray(m.wv.vectors, dtype=np.float64),
            np.asarray(m.syn1neg, dtype=np.float64),
            np.array([m.wv.get_vecattr(w, "count") for w in m.wv.index_to_key], dtype=np.float64))


def procrustes(a, b):
    """The rotation R minimising |a R - b| over the first FIT_ROWS rows."""
    u, _, vt = np.linalg.svd(a[:FIT_ROWS].T @ b[:FIT_ROWS])
    return u @ vt


def row_cos(a, b):
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(1) / np.maximum(na * nb, 1e-30), na / np.maximum(nb, 1e-30)


def neighbours(x, rows, k=10):
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30)
    out = []
    for i in range(0, len(rows), 256):
        q = rows[i:i + 256]
        s = xn[q] @ xn.T
        s[np.arange(len(q)), q] = -np.inf
        out.append(np.argpartition(-s, k, axis=1)[:, :k])
    return np.vstack(out)


def compare(ref, other, samples):
    """Per band: cos and norm of both matrices, nn@10 of the input matrix."""
    res = {}
    aligned = {}
    for m in ("in", "out"):
        a, b = other[m], ref[m]
        aligned[m] = row_cos(a @ procrustes(a, b), b)
    nn_ref = {name: neighbours(ref["in"], rows) for name, rows in samples.items()}
    for lo, hi, name in BANDS:
        hi = hi or len(ref["in"])
        if lo >= len(ref["in"]):
            continue
        band = {}
        for m in ("in", "out"):
            cos, norm = aligned[m]
            band[m + "_cos"] = float(cos[lo:hi].mean())
            band[m + "_norm"] = float(norm[lo:hi].mean())
        nn = neighbours(other["in"], samples[name])
        band["nn10"] = float(np.mean([len(set(x) & set(y)) / 10.0
                                      for x, y in zip(nn, nn_ref[name])]))
        res[name] = band
    return res


def occurrences(counts, ranks, args, extra):
    """Median occurrences per rank between two exchanges of a row, per band and matrix, and the
    bounded rule's factor on the sum when all ranks changed the row (distributed.md)."""
    opts = {"--sync-words": 100000, "--sync-rows": 256, "--negative": 5, "--sample": 1e-4}
    toks = list(extra)
    combine = "bounded"
    for i, t in enumerate(toks[:-1]):
        if t in opts:
            opts[t] = float(toks[i + 1])
        elif t == "--sync-combine":
            combine = toks[i + 1]
    total = counts.sum()
    t = opts["--sample"] * total
    keep = np.minimum(1.0, (np.sqrt(counts / t) + 1) * t / counts) if t > 0 else np.ones_like(
        counts)
    kept_share = (counts * keep).sum() / total
    q = counts ** 0.75
    q /= q.sum()
    share = args.epochs * total / ranks  # words a rank trains in the run
    b = int(opts["--sync-rows"])
    r = np.arange(len(counts))
    if b == 0:
        period = np.ones_like(counts)
    else:
        tier = np.where(r < b, 0, np.floor(np.log2(np.maximum(r, 1) / b)) + 1)
        period = 2.0 ** tier
    words = np.minimum(opts["--sync-words"] * period, share)
    x_in = words * counts / total * keep
    x_out = x_in + words * opts["--negative"] * kept_share * q
    res = {}
    for lo, hi, name in BANDS:
        hi = hi or len(counts)
        if lo >= len(counts):
            continue
        band = {}
        for m, x in (("in", x_in), ("out", x_out)):
            s = x[lo:hi] / SATURATION
            n = ranks
            factor = (1 - np.exp(-n * s)) / (n * (1 - np.exp(-s)))
            factor = np.clip(factor, 1.5 / n, 1.0)
            if b > 0:
                factor[: max(0, min(hi, b) - lo)] = 1.5 / n  # the every-round rows
            else:
                factor[:] = 1.5 / n
            if combine != "bounded":  # sum: the changes as they are; average: their mean
                factor[:] = 1.0 if combine == "sum" else 1.0 / n
            band[m + "_occ"] = float(np.median(x[lo:hi]))
            band[m + "_factor"] = float(np.median(factor))
        band["words_between"] = float(np.median(words[lo:hi]))
        res[name] = band
    return res


def dots(args):
    """Expected dot products per corpus word of one process (skip-gram, negative sampling),
    from word2vec's subsampling and a uniform window shrink drawn over Brown's lines."""
    brown = os.path.join(HERE, "data", "brown.txt")
    corpus_path(args.copies)  # fetches brown.txt if missing
    with open(brown, encoding="utf-8") as f:
        lines = [line.split() for line in f]
    vocab = {}
    sents = [np.array([vocab.setdefault(w, len(vocab)) for w in line], dtype=np.int64)
             for line in lines if line]
    counts = np.bincount(np.concatenate(sents)).astype(np.float64)
    total = counts.sum()
    t = args.dots_sample * total  # keep probabilities are those of every copy of x16
    keep = np.minimum(1.0, (np.sqrt(counts / t) + 1) * t / counts)
    neg, window, block = args.dots_negative, args.dots_window, args.combine
    shared = max(neg, int(round(1.25 * block)))  # --block-negatives auto, as the kernel
    rng = np.random.default_rng(1)
    tot = {"kept": 0, "pairs": 0, "cells": 0, "weighted": 0, "blocks": 0}
    for _ in range(args.dots_draws):
        for s in sents:
            k = s[rng.random(len(s)) < keep[s]]
            n = len(k)
            if n < 2:
                tot["kept"] += n
                continue
            b = rng.integers(1, window + 1, n)
            i = np.arange(n)
            lo, hi = np.maximum(i - b, 0), np.minimum(i + b, n - 1)
            tot["kept"] += n
            tot["pairs"] += int((hi - lo).sum())
            for c0 in range(0, n, block):
                ctx, pos = set(), set()
                centres = set()
                for c in range(c0, min(c0 + block, n)):
                    centres.add(int(k[c]))
                    for j in range(lo[c], hi[c] + 1):
                        if j != c:
                            ctx.add(int(k[j]))
                            pos.add((int(k[j]), int(k[c])))
                if not ctx:
                    continue
                tot["blocks"] += 1
                tot["cells"] += len(ctx) * (len(centres) + shared)
                tot["weighted"] += len(pos) + len(ctx) * shared
    words = total * args.dots_draws
    per = {key: v / words for key, v in tot.items()}
    per["classic"] = per["pairs"] * (1 + neg)
    print("Brown's lines (%d words, V %d), sample %g, window %d shrunk uniformly, negative %d; "
          "%d draws; batched blocks of %d centre words sharing %d noise words. Per corpus word:"
          % (total, len(counts), args.dots_sample, window, neg, args.dots_draws, block, shared))
    print("  kept centre words %.4f (expected %.4f), (context, centre) pairs %.4f (%.2f a kept "
          "word)" % (per["kept"], (counts * keep).sum() / total, per["pairs"],
                     tot["pairs"] / max(tot["kept"], 1)))
    print("  classic dots (pairs x (1 + negative)) %.3f; batched cells %.3f (%.2f a pair), of "
          "them with a weight %.3f (%.2f a pair); blocks %.4f" % (
              per["classic"], per["cells"], tot["cells"] / tot["pairs"], per["weighted"],
              tot["weighted"] / tot["pairs"], per["blocks"]))
    print("  all-reduced bytes handed to MPI a rank per corpus word (fp32 / fp16): classic "
          "%.1f / %.1f, batched %.1f / %.1f, batched weighted cells only %.1f / %.1f; on the wire "
          "(ring) times 2(N-1)/N" % (4 * per["classic"], 2 * per["classic"], 4 * per["cells"],
                                     2 * per["cells"], 4 * per["weighted"],
                                     2 * per["weighted"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"words": total, "draws": args.dots_draws, "per_word": per}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "/usr/bin/mpirun")
    ap.add_argument("--ranks", default="4,8")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--sample", type=int, default=1000, help="words a band for nn@10")
    ap.add_argument("--variant", action="append", default=[],
                    help="LABEL=TRAIN FLAGS, trained at --variant-ranks ranks, seed 1")
    ap.add_argument("--variant-ranks", type=int, default=4)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--dots", action="store_true",
                    help="count one process's dot products a corpus word (nothing is trained)")
    ap.add_argument("--dots-draws", type=int, default=4)
    ap.add_argument("--dots-sample", type=float, default=1e-4)
    ap.add_argument("--dots-window", type=int, default=5)
    ap.add_argument("--dots-negative", type=int, default=5)
    ap.add_argument("--combine", type=int, default=4, help="--dots: centre words a block")
    args = ap.parse_args()
    if args.dots:
        dots(args)
        return
    corpus = corpus_path(args.copies)
    out_dir = os.path.join(HERE, "out", "rows")
    os.makedirs(out_dir, exist_ok=True)
    bin_sha = sha(args.posvec)
    runs = [("1 process, seed 2 (floor)", 1, 2, ())]
    runs += [("%d ranks" % n, n, 1, ()) for n in map(int, args.ranks.split(","))]
    for v in args.variant:
        label, _, flags = v.partition("=")
        runs.append(("%d ranks, %s" % (args.variant_ranks, label), args.variant_ranks, 1,
                     tuple(shlex.split(flags))))
    ref_path, _ = train(args, 1, 1, (), out_dir, bin_sha, corpus)
    words, rin, rout, counts = load(ref_path)
    ref = {"in": rin, "out": rout}
    rng = np.random.default_rng(1)
    samples = {}
    for lo, hi, name in BANDS:
        hi = hi or len(words)
        if lo < len(words):
            rows = np.arange(lo, hi)
            samples[name] = np.sort(rng.choice(rows, min(args.sample, len(rows)),
                                               replace=False))
    results = []
    for label, n, seed, extra in runs:
        path, info = train(args, n, seed, extra, out_dir, bin_sha, corpus)
        w2, oin, oout, _ = load(path)
        if w2 != words:
            sys.exit("rows_vs_one: %s has another vocabulary than the reference" % label)
        cmp_ = compare(ref, {"in": oin, "out": oout}, samples)
        occ = occurrences(counts, n, args, extra) if n > 1 else None
        results.append({"label": label, "ranks": n, "seed": seed, "extra": list(extra),
                        "cmd": info["cmd"], "mb": info.get("own_mb"), "bands": cmp_,
                        "occ": occ})
        log("rows_vs_one: compared %s" % label)
    print("\nRows against one process seed 1 (Brown x%d, every copy shuffled, %d epoch(s), dim %d, "
          "one thread a rank; V = %d; Procrustes on the %d most frequent rows, per matrix; "
          "nn@10 over up to %d words a band). cos / norm ratio:" % (
              args.copies, args.epochs, args.dim, len(words), FIT_ROWS, args.sample))
    print()
    print("| run | band | input cos | input norm | output cos | output norm | nn@10 |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        for name, b in r["bands"].items():
            print("| %s | %s | %.3f | %.2f | %.3f | %.2f | %.2f |" % (
                r["label"], name, b["in_cos"], b["in_norm"], b["out_cos"], b["out_norm"],
                b["nn10"]))
    print("\nPer rank between two exchanges of a row (median over the band; from the schedule): "
          "words of the rank's share, occurrences of the input / output row, and the bounded "
          "rule's factor on the sum when every rank changed it (input / output):")
    print()
    print("| run | band | words between | input occ. | output occ. | factor in / out |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if not r["occ"]:
            continue
        for name, b in r["occ"].items():
            print("| %s | %s | %.0f | %.1f | %.1f | %.2f / %.2f |" % (
                r["label"], name, b["words_between"], b["in_occ"], b["out_occ"],
                b["in_factor"], b["out_factor"]))
    print("\nCommands:")
    for r in results:
        print("- %s: `%s`" % (r["label"], r["cmd"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"vocab": len(words), "runs": results}, f, indent=1)


if __name__ == "__main__":
    main()
