#!/usr/bin/python3
"""Time to quality of distributed training: how many words each of N ranks has to train to learn
what one process learns from the whole corpus in one epoch.

Corpus: Brown x16 (Brown's lines 16 times, every copy in its own order, shuffled_copies with seed
16), skip-gram with negative sampling, dim 100, window 5, negative 5, sample 1e-4, min-count 5,
alpha 0.025, --pretokenized. For N = 1 (one process, one thread: a one-thread run is
reproducible) and N >= 2 ranks under mpirun (one thread a rank, --oversubscribe, Open MPI over
TCP on loopback as bench-mpi.sh runs it), epochs 1..4 (separate runs with --epochs k) and seeds
1..3: analogy, WordSim-353 and SimLex-999 (eval_vectors.py), the MB each rank hands to MPI (the
`sync:` line of rank 0), and the wall time of the run.

The band: for every score, the lowest of the one-process 1-epoch seeds minus 0.002 (analogy) or
0.02 (WordSim-353, SimLex-999). A configuration reaches the band when the arithmetic mean of its
seeds is at or above the band's floor on all three scores. S_N = (words one process trains to
reach the band: one epoch by construction) / (words each of N ranks trains to reach it)
= N / (epochs N ranks need); not reached within the epochs run: S_N < N / (the most epochs run).

--extra FLAGS adds train flags to the runs at N >= 2 (design variants, named by --label); the
one-process runs, which define the band, always use the defaults. Results are cached per run in
tools/bench/out/ (keyed by the binary's hash, the corpus and the settings), so a rerun only trains
what is missing.
Usage: bash tools/bench/bench-quality.sh [--quick] [--ranks 1,2,4,8] [--epochs 1,2,3,4]
       [--seeds 1,2,3] [--band-seeds 1,2,3] [--posvec PATH] [--data DIR] [--extra "FLAGS"]
       [--label NAME]"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench_train import count_words, shuffled_copies, evaluate  # noqa: E402
from bench_mpi import COMMON, MPI_TCP, parse_sync, sha  # noqa: E402

KEYS = ("analogy", "wordsim353", "simlex999")
NAMES = {"analogy": "analogy", "wordsim353": "WordSim-353", "simlex999": "SimLex-999"}
TOLERANCE = {"analogy": 0.002, "wordsim353": 0.02, "simlex999": 0.02}
OUT = os.path.join(HERE, "out")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def corpus_path(copies):
    """Brown xN with every copy shuffled (seed 16), made once under tools/bench/data/."""
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")],
                       check=True)
    dst = os.path.join(HERE, "data", "brown-x%d-shuffled.txt" % copies)
    shuffled_copies(brown, dst, 16, copies, False)
    return dst


def with_extra(common, extra):
    """common's flags with those extra sets (e.g. --alpha) taken from extra."""
    extra = list(extra)
    out, i = [], 0
    while i < len(common):
        if common[i] in extra:
            i += 2  # every flag of COMMON but --pretokenized takes a value
            continue
        out.append(common[i])
        i += 1
    return out + extra


def train_cmd(args, ranks, corpus, out, epochs, seed, extra=()):
    cmd = [args.posvec, "train", corpus, "-o", out, "--dim", str(args.dim), "--epochs",
           str(epochs), "--threads", "1", "--seed", str(seed)] + with_extra(COMMON, extra)
    if ranks == 1:
        return cmd
    flags = MPI_TCP + shlex.split(args.mpirun_flags)
    if os.geteuid() == 0:
        flags.append("--allow-run-as-root")
    return [args.mpirun, "-np", str(ranks)] + flags + cmd


def run_key(args, bin_sha, corpus_id, ranks, epochs, seed, extra):
    settings = json.dumps([corpus_id, args.dim, COMMON, ranks, epochs, seed, list(extra),
                           args.mpirun_flags if ranks > 1 else ""])
    return "quality-%s-%s" % (bin_sha, hashlib.sha256(settings.encode()).hexdigest()[:12])


def train_one(args, ranks, corpus, epochs, seed, extra, tmp):
    """Trains one configuration; returns (record without scores, vectors path)."""
    vec = os.path.join(tmp, "v-%d-%d-%d.bin" % (ranks, epochs, seed))
    cmd = train_cmd(args, ranks, corpus, vec, epochs, seed, extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    rec = {"ranks": ranks, "epochs": epochs, "seed": seed, "extra": list(extra), "wall": wall,
           "cpu": cpu,
           "cmd": " ".join(cmd), "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
           "load": os.getloadavg()[0]}
    rec.update(parse_sync(r.stderr, ranks))
    losses = [line for line in r.stderr.splitlines() if "done: loss" in line]
    rec["last_epoch"] = losses[-1].strip() if losses else None
    if r.returncode != 0:  # a diverging variant: recorded, not scored
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        rec["failed"] = (errors or r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]
        log("bench-quality: failed: %s\n%s" % (" ".join(cmd), r.stderr[-1500:]))
        return rec, None
    return rec, vec


def measure(args, corpus, corpus_id, bin_sha, configs):
    """Scores of every (ranks, epochs, seed, extra) in configs, from the cache or by training
    (one run at a time, so wall times are not disturbed) and then evaluating the new vectors
    --eval-jobs at a time."""
    os.makedirs(OUT, exist_ok=True)
    results, todo = {}, []
    for c in configs:
        path = os.path.join(OUT, run_key(args, bin_sha, corpus_id, *c) + ".json")
        if os.path.exists(path):
            with open(path) as f:
                results[c] = json.load(f)
        else:
            todo.append((c, path))
    if not todo:
        return results
    tmp = tempfile.mkdtemp(prefix="posvec-bench-quality-")
    try:
        # A batch of trainings, then their evaluations in parallel (the evaluation takes longer
        # than an epoch of training); batches keep what is finished cached if the run stops.
        for i in range(0, len(todo), args.batch):
            batch = todo[i:i + args.batch]
            trained = []
            for c, path in batch:
                rec, vec = train_one(args, c[0], corpus, c[1], c[2], c[3], tmp)
                log("bench-quality: %d rank(s), %d epoch(s), seed %d%s: %.1f s, %s MB a rank" % (
                    c[0], c[1], c[2], " " + " ".join(c[3]) if c[3] else "", rec["wall"],
                    rec.get("own_mb")))
                trained.append((c, path, rec, vec))
            with concurrent.futures.ThreadPoolExecutor(args.eval_jobs) as pool:
                scores = list(pool.map(lambda t: evaluate(t[3], args.data) if t[3] else None,
                                       trained))
            for (c, path, rec, vec), s in zip(trained, scores):
                rec.update({k: s[k] if s else None for k in KEYS})
                rec["binary"], rec["sha"] = args.posvec, bin_sha
                with open(path + ".tmp", "w") as f:
                    json.dump(rec, f, indent=1)
                os.replace(path + ".tmp", path)
                if vec:
                    os.remove(vec)
                results[c] = rec
                log("bench-quality:   %d rank(s), %d epoch(s), seed %d: %s" % (
                    c[0], c[1], c[2], " / ".join("%.4f" % s[k] for k in KEYS) if s
                    else rec["failed"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def mean_range(values, spec):
    if len(values) == 1:
        return spec % values[0]
    return (spec + " (" + spec + "–" + spec + ")") % (statistics.mean(values), min(values),
                                                      max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="ranks 1,4, epochs 1,2, seeds 1,2 (a few minutes)")
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--epochs", default="1,2,3,4")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--band-seeds", default="",
                    help="one-process seeds that define the band (default: --seeds), e.g. 1,2,3 "
                         "for a one-seed variant judged against the three-seed band")
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--data", default=os.environ.get(
        "POSVEC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")),
        help="directory with questions-words.txt, wordsim353.tsv, simlex999.txt")
    ap.add_argument("--copies", type=int, default=16, help="Brown copies in the corpus")
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--extra", default="", help="train flags for the runs at N >= 2")
    ap.add_argument("--label", default="", help="name of the --extra variant in the output")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "/usr/bin/mpirun")
    ap.add_argument("--mpirun-flags", default="")
    ap.add_argument("--eval-jobs", type=int, default=2, help="evaluations run side by side")
    ap.add_argument("--batch", type=int, default=6, help="trainings before their evaluation")
    ap.add_argument("--one-epochs", action="store_true",
                    help="also run one process at every --epochs (not needed for S_N)")
    ap.add_argument("--json", help="also write the table's figures to this file")
    args = ap.parse_args()
    if args.quick:
        args.ranks, args.epochs, args.seeds = "1,4", "1,2", "1,2"
    ranks = sorted({1} | {int(x) for x in args.ranks.split(",")})
    epochs = sorted(int(x) for x in args.epochs.split(","))
    seeds = [int(x) for x in args.seeds.split(",")]
    band_seeds = [int(x) for x in (args.band_seeds or args.seeds).split(",")]
    if 1 not in epochs:
        sys.exit("bench-quality: --epochs must include 1 (the band is one process's 1 epoch)")
    if not os.path.exists(os.path.join(args.data, "questions-words.txt")):
        sys.exit("bench-quality: no evaluation data in %s (pass --data DIR)" % args.data)
    extra = tuple(shlex.split(args.extra))
    label = args.label or (args.extra if args.extra else "defaults")
    corpus = corpus_path(args.copies)
    words = count_words(corpus)
    corpus_id = "brown-x%d-shuffled-%d" % (args.copies, words)
    bin_sha = sha(args.posvec)
    configs = [(n, e, s, extra if n > 1 else ()) for n in ranks for e in epochs for s in seeds]
    # Fewer runs where the answer is known: one process past epoch 1 is not needed for S_N.
    configs = [c for c in configs if c[0] > 1 or c[1] == 1 or args.one_epochs]
    configs += [(1, 1, s, ()) for s in band_seeds if (1, 1, s, ()) not in configs]
    res = measure(args, corpus, corpus_id, bin_sha, configs)

    one = [res[(1, 1, s, ())] for s in band_seeds]
    floor = {k: min(r[k] for r in one) - TOLERANCE[k] for k in KEYS}
    print("\nTime to quality: Brown x%d, every copy shuffled (%s, %d words), dim %d, window 5, "
          "negative 5, sample 1e-4, min-count 5, alpha 0.025, --pretokenized; posvec %s (%s); "
          "N = 1: one process, one thread (reproducible); N >= 2: mpirun --oversubscribe, one "
          "thread a rank, on %d cores; variant: %s%s" % (
              args.copies, os.path.relpath(corpus, ROOT), words, args.dim, args.posvec, bin_sha,
              os.cpu_count(), label, " (" + args.extra + ", ranks >= 2)" if args.extra else ""))
    print("Seeds %s: mean (lowest–highest). Band: each score at least the lowest one-process "
          "1-epoch seed minus %s: %s. In band: the seeds' mean is, on all three scores." % (
              ",".join(map(str, seeds)) + (" (band: one process, seeds %s)" % ",".join(
                  map(str, band_seeds)) if band_seeds != seeds else ""),
              " / ".join("%g" % TOLERANCE[k] for k in KEYS),
              " / ".join("%.4f" % floor[k] for k in KEYS)))
    print()
    print("| ranks | epochs | words a rank (M) | analogy | WordSim-353 | SimLex-999 | in band | "
          "MB sent a rank | rounds | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    table, first = [], {}
    for n in ranks:
        for e in epochs:
            runs = [res[c] for c in configs if c[0] == n and c[1] == e]
            if not runs:
                continue
            failed = [r for r in runs if r.get("failed")]
            if failed:
                print("| %d | %d | %.2f | failed (%d of %d seeds): %s |||||||" % (
                    n, e, e * words / n / 1e6, len(failed), len(runs), failed[0]["failed"]))
                continue
            means = {k: statistics.mean(r[k] for r in runs) for k in KEYS}
            inside = all(means[k] >= floor[k] for k in KEYS)
            if inside and n not in first:
                first[n] = e
            mb = [r["own_mb"] for r in runs if r.get("own_mb") is not None]
            rounds = [r["rounds"] for r in runs if r.get("rounds") is not None]
            walls = [r["wall"] for r in runs]
            cpus = [r["cpu"] for r in runs if r.get("cpu") is not None]
            row = {"ranks": n, "epochs": e, "words_per_rank": e * words / n, "in_band": inside,
                   "mb": statistics.mean(mb) if mb else None, "wall": statistics.mean(walls),
                   "cpu": statistics.mean(cpus) if cpus else None,
                   "rounds": rounds[0] if rounds else None,
                   "scores": {k: [r[k] for r in runs] for k in KEYS}}
            table.append(row)
            print("| %d | %d | %.2f | %s | %s | %s | %s | %s | %s | %.1f | %s |" % (
                n, e, e * words / n / 1e6, mean_range(row["scores"]["analogy"], "%.4f"),
                mean_range(row["scores"]["wordsim353"], "%.3f"),
                mean_range(row["scores"]["simlex999"], "%.3f"), "yes" if inside else "no",
                "%.1f" % row["mb"] if row["mb"] is not None else "-",
                row["rounds"] if row["rounds"] is not None else "-", row["wall"],
                "%.1f" % row["cpu"] if row["cpu"] is not None else "-"))
    print()
    print("| ranks | epochs to the band | words a rank to the band (M) | S_N | "
          "wall s to the band |")
    print("|---|---|---|---|---|")
    speedups = {}
    for n in ranks:
        if n in first:
            e = first[n]
            wall = next(r["wall"] for r in table if r["ranks"] == n and r["epochs"] == e)
            speedups[n] = n / e
            print("| %d | %d | %.2f | %.2f | %.1f |" % (n, e, e * words / n / 1e6, n / e, wall))
        else:
            speedups[n] = None
            print("| %d | not in %d | > %.2f | < %.2f | - |" % (
                n, max(epochs), max(epochs) * words / n / 1e6, n / max(epochs)))
    print("(S_N = words one process trains to reach the band, %.2fM, over the words each of N "
          "ranks trains to reach it; the one-process runs use one thread, the N-rank runs share "
          "%d cores, so the wall times compare work, not a cluster's speed)" % (
              words / 1e6, os.cpu_count()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"label": label, "extra": args.extra, "floor": floor, "rows": table,
                       "speedups": speedups, "words": words, "sha": bin_sha}, f, indent=1)


if __name__ == "__main__":
    main()
