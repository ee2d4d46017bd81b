#!/usr/bin/python3
"""Distributed training on one machine: 1 process x 2 threads against 2 MPI
processes x 1 thread (the same cores), on Brown x16 for 1 epoch (throughput) and
on Brown for 5 epochs (quality, scored by eval_vectors.py as in bench-train.sh);
the bytes each rank reduces per synchronisation and per epoch; and from them a
projection of the communication share to 8, 32 and 128 machines on 10 and 100
Gbit/s networks. Run through bench-mpi.sh."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench_train import count_words, make_x16, evaluate  # noqa: E402

# The hyperparameters of bench-train.sh.
COMMON = ["--pretokenized", "--window", "5", "--negative", "5", "--sample", "1e-4",
          "--min-count", "5", "--alpha", "0.025"]
SYNC = re.compile(r"synchronisation: (\d+) rounds for the (\d+) \+ (\d+) most frequent rows "
                  r"\(([\d.e+-]+) MB each\) and one for all rows \(([\d.e+-]+) MB\)"
                  r"(?:.*warm-up adds (\d+) rounds)?")


def run(cmd):
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if r.returncode != 0:
        sys.exit("bench-mpi: command failed: %s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return wall, r.stdout, r.stderr


def posvec_cmd(args, corpus, out, procs, threads, dim, epochs, seed, extra):
    cmd = [args.posvec, "train", corpus, "-o", out, "--dim", str(dim), "--epochs", str(epochs),
           "--threads", str(threads), "--seed", str(seed), "--json"] + COMMON + extra
    if procs > 1:
        cmd = [args.mpirun, "-np", str(procs)] + args.mpirun_flags.split() + cmd
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--mpirun-flags", default="",
                    help="extra mpirun flags, e.g. --mpirun-flags=--oversubscribe (--allow-run-as-root "
                         "is added when run as root)")
    ap.add_argument("--data", default=os.environ.get("POSVEC_SHARED_DATA",
                                                     os.path.join(ROOT, "..", "shared", "data")),
                    help="evaluation data (questions-words.txt, wordsim353.tsv, simlex999.txt)")
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="throughput runs per setup")
    ap.add_argument("--seeds", type=int, default=3, help="quality runs per setup")
    ap.add_argument("--sync-words", type=int, default=100000)
    ap.add_argument("--sync-warmup", type=int, default=5000)
    ap.add_argument("--sync-rows", type=int, default=4096)
    args = ap.parse_args()
    if os.geteuid() == 0 and "--allow-run-as-root" not in args.mpirun_flags:
        args.mpirun_flags += " --allow-run-as-root"  # Open MPI refuses root otherwise
    extra = ["--sync-words", str(args.sync_words), "--sync-rows", str(args.sync_rows),
             "--sync-warmup", str(args.sync_warmup)]

    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "fetch-brown.sh")], check=True)
    x16 = os.path.join(HERE, "data", "brown-x16.txt")
    make_x16(brown, x16)
    words = count_words(brown)
    tmp = tempfile.mkdtemp(prefix="bench-mpi-")
    setups = [("1 process x 2 threads", 1, 2), ("2 processes x 1 thread", 2, 1)]

    print("bench-mpi: Brown x16 (%d words), 1 epoch, dim %d, %d runs each; sync every %d words "
          "per rank (warm-up from %d), %d rows; load average %.1f" %
          (16 * words, args.dim, args.repeats, args.sync_words, args.sync_warmup, args.sync_rows,
           os.getloadavg()[0]))
    rates = {}
    sync = None
    for name, procs, threads in setups:
        walls = []
        for _ in range(args.repeats):
            wall, out, err = run(posvec_cmd(args, x16, os.path.join(tmp, "x16.bin"), procs,
                                            threads, args.dim, 1, 1, extra))
            walls.append(wall)
            m = SYNC.search(err)
            if m:
                sync = m
        wall = statistics.median(walls)
        rates[procs] = 16 * words / wall
        print("  %-24s %6.1f s wall (median; runs %s)  %7.0fk words/s" %
              (name, wall, ", ".join("%.1f" % w for w in walls), rates[procs] / 1e3))
    print("  2 processes / 1 process throughput: %.2f" % (rates[2] / rates[1]))

    if sync:
        syncs, hot_in, hot_out = int(sync.group(1)), int(sync.group(2)), int(sync.group(3))
        hot_mb, all_mb = float(sync.group(4)), float(sync.group(5))
        epoch_mb = syncs * hot_mb + all_mb
        warm = int(sync.group(6) or 0)
        print("  bytes each rank reduces: %.2f MB per synchronisation (%d + %d rows), %.1f MB "
              "for all rows, %.1f MB per epoch (%d synchronisations; the first epoch %d more)" %
              (hot_mb, hot_in, hot_out, all_mb, epoch_mb, syncs, warm))
        project(hot_mb, all_mb, args.sync_words, rates[1], 16 * words, args.sync_rows)

    if os.path.exists(os.path.join(args.data, "questions-words.txt")):
        print("bench-mpi: quality on Brown (%d words), 5 epochs, dim %d, seeds 1..%d" %
              (words, args.dim, args.seeds))
        for name, procs, threads in setups:
            scores = []
            for seed in range(1, args.seeds + 1):
                vec = os.path.join(tmp, "q.bin")
                run(posvec_cmd(args, brown, vec, procs, threads, args.dim, 5, seed, extra))
                scores.append(evaluate(vec, args.data))
            line = []
            for key in ("analogy", "wordsim353", "simlex999"):
                v = [s[key] for s in scores]
                line.append("%s %.3f [%.3f, %.3f]" % (key, statistics.mean(v), min(v), max(v)))
            print("  %-24s %s  (load average %.1f)" % (name, "  ".join(line), os.getloadavg()[0]))
    else:
        print("bench-mpi: no evaluation data in %s (pass --data DIR): quality not measured"
              % args.data)
    shutil.rmtree(tmp, ignore_errors=True)


def project(hot_mb, all_mb, sync_words, rate, corpus_words, sync_rows):
    """Ring allreduce: each rank sends (and receives) 2 (p - 1) / p of the buffer, plus
    2 (p - 1) latency steps (5 us each, Ethernet). Compute between two averagings is
    sync_words / rate per machine, an epoch corpus / (p rate); communication is not
    overlapped with compute here (the other threads do keep training during an
    averaging, so this is pessimistic). Two cases: the measured run (Brown x16, machines
    like this one), and a web-scale run whose bytes follow the measured formula
    (2 matrices x rows x dim x 4 bytes): 1B words, 1M-word vocabulary, dim 300, nodes
    16 times this machine's rate (32 cores), at --sync-words and 10 times it."""
    dim_ratio = 300 / 100
    cases = [
        ("Brown x16 (%.1fM words), V %.0fk, dim 100, %.0fk words/s per machine" %
         (corpus_words / 1e6, all_mb * 2**20 / 800 / 1e3, rate / 1e3),
         hot_mb, all_mb, rate, corpus_words, sync_words),
    ] + [("1B words, V 1M, dim 300, %.1fM words/s per machine (32 cores)" % (16 * rate / 1e6),
          hot_mb * dim_ratio, 2 * 1e6 * 300 * 4 / 2**20, 16 * rate, 1e9, sw)
         for sw in (sync_words, 10 * sync_words)]
    for title, hot, full, r, words, sync_words in cases:
        print("  projection, %s; --sync-words %d, --sync-rows %d (%.1f MB), all rows %.0f MB:" %
              (title, sync_words, sync_rows, hot, full))
        print("    %-9s %-10s %11s %11s %12s %11s" % ("machines", "network", "frequent", "epoch end",
                                                      "epoch comp.", "comm share"))
        for gbit in (10, 100):
            bps = gbit * 1e9 / 8
            for p in (8, 32, 128):
                factor = 2 * (p - 1) / p
                lat = 2 * (p - 1) * 5e-6
                t_hot = hot * 2**20 * factor / bps + lat
                t_all = full * 2**20 * factor / bps + lat
                compute = words / (p * r)
                syncs = max(0, words / p / sync_words - 1)
                comm = syncs * t_hot + t_all
                print("    %-9d %-10s %8.1f ms %8.0f ms %10.1f s %10.0f%%" %
                      (p, "%d Gbit/s" % gbit, 1e3 * t_hot, 1e3 * t_all, compute,
                       100 * comm / (comm + compute)))


if __name__ == "__main__":
    main()
