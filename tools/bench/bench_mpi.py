#!/usr/bin/python3
"""Distributed training benchmark: MPI ranks on one machine, one thread a rank.

For the build under test (--posvec) and, side by side, a previous build (--baseline):
  - traffic at 2, 4 and 8 ranks on Brown xN (1 epoch): bytes on the wire per rank, counted on
    the loopback device of a private network namespace (so no other process's traffic is
    counted) with Open MPI on TCP only (shared memory off), and the bytes posvec itself reports;
    rounds, waiting share (from the `sync:` line where the build prints it), wall time;
  - quality at 2, 4 and 8 ranks against one process (Brown, 5 epochs, seeds 1..3), scored by
    eval_vectors.py: analogy, WordSim-353, SimLex-999;
  - the compute throughput of one core (one process, one thread) at dim 100 and 300;
  - from those, the projection of the communication share to 8, 32 and 128 machines on 10 and
    100 Gbit/s (mpi_model.py).
Run through bench-mpi.sh. Results are cached per binary (content hash) and settings in
tools/bench/out/; --reuse-baseline takes the baseline's from there instead of re-running it."""
import argparse
import datetime
import hashlib
import json
import os
import re
import resource
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
import mpi_model  # noqa: E402

# The hyperparameters of bench-train.sh.
COMMON = ["--pretokenized", "--window", "5", "--negative", "5", "--sample", "1e-4",
          "--min-count", "5", "--alpha", "0.025"]
# The build before the sparse schedule: hot rows every --sync-words, all rows each epoch.
OLD_SYNC = re.compile(r"synchronisation: (\d+) rounds for the (\d+) \+ (\d+) most frequent rows "
                      r"\(([\d.e+-]+) MB each\) and one for all rows \(([\d.e+-]+) MB\)"
                      r"(?:.*warm-up adds (\d+) rounds)?")
# The line every build after it prints on rank 0.
NEW_SYNC = re.compile(r"sync: (\d+) rounds, ([\d.e+-]+) MB sent per rank, ([\d.e+-]+) % of wall "
                      r"time waiting")
EPOCH_WORDS = re.compile(r"epoch 1 done: loss [^,]*, ([\d.]+)([kM]) words")
RATE_METHOD = "cpu-time, epochs 2 - 1, brown-xN"
MPI_TCP = ["--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
           "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
QUALITY_KEYS = ("analogy", "wordsim353", "simlex999")
MB = 2.0 ** 20


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, env=None):
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    if r.returncode != 0:
        sys.exit("bench-mpi: command failed (exit %d): %s\n%s" %
                 (r.returncode, " ".join(cmd), r.stderr[-3000:]))
    return wall, r.stdout, r.stderr


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def train_cmd(posvec, corpus, out, threads, dim, epochs, seed, min_count=5):
    common = COMMON[:]
    common[common.index("--min-count") + 1] = str(min_count)
    return [posvec, "train", corpus, "-o", out, "--dim", str(dim), "--epochs", str(epochs),
            "--threads", str(threads), "--seed", str(seed), "--json"] + common


def mpi_cmd(args, ranks, cmd):
    flags = MPI_TCP + args.mpirun_flags.split()
    if os.geteuid() == 0:
        flags.append("--allow-run-as-root")  # Open MPI refuses root otherwise
    return [args.mpirun, "-np", str(ranks)] + flags + cmd


def lo_bytes(text):
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == "lo":
            f = rest.split()
            return int(f[0]), int(f[8])  # received, sent
    raise ValueError("no lo in /proc/net/dev")


def wire_run(args, cmd, tmp):
    """Runs cmd in a new network namespace whose only device is its own loopback; returns
    (wall, stdout, stderr, bytes sent on lo)."""
    script = os.path.join(tmp, "netns.sh")
    with open(script, "w") as f:
        f.write('set -e\nd="$1"\nshift\nip link set lo up\ncat /proc/net/dev > "$d/before"\n'
                'set +e\n"$@"\nrc=$?\ncat /proc/net/dev > "$d/after"\nexit $rc\n')
    wall, out, err = run(["unshare", "--net", "bash", script, tmp] + cmd)
    with open(os.path.join(tmp, "before")) as b, open(os.path.join(tmp, "after")) as a:
        sent = lo_bytes(a.read())[1] - lo_bytes(b.read())[1]
    return wall, out, err, sent


def parse_sync(err, ranks):
    """posvec's own traffic figures: the `sync:` line, or the older `synchronisation:` line
    (MB of send buffers a rank hands to MPI in both)."""
    m = NEW_SYNC.search(err)
    if m:
        return {"rounds": int(m.group(1)), "own_mb": float(m.group(2)),
                "waiting": float(m.group(3)), "own_kind": "sent"}
    m = OLD_SYNC.search(err)
    if m:
        rounds, warm = int(m.group(1)), int(m.group(6) or 0)
        hot, full = float(m.group(4)), float(m.group(5))
        reduced = (rounds + warm) * hot + full
        return {"rounds": rounds + warm, "own_mb": reduced,
                "waiting": None, "own_kind": "reduced", "hot_mb": hot,
                "all_mb": full, "hot_rows": int(m.group(2)) + int(m.group(3))}
    return {"rounds": None, "own_mb": None, "waiting": None, "own_kind": None}


def measure_rates(args, posvec, xn, res, tmp):
    # Compute throughput of one core (one process, one thread, no MPI) on Brown xN, from CPU time
    # so that other load on the machine does not lower it: (CPU of 2 epochs - CPU of 1 epoch)
    # / words of an epoch, which also leaves out counting and writing.
    for dim in sorted({args.dim, 300}):
        cpu = []
        for epochs in (1, 2):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            _, _, err = run(train_cmd(posvec, xn, os.path.join(tmp, "r.bin"), 1, dim, epochs,
                                      1))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        m = EPOCH_WORDS.search(err)
        epoch_words = float(m.group(1)) * {"k": 1e3, "M": 1e6}[m.group(2)] if m \
            else args.copies * args.brown_words
        res["rate"][str(dim)] = epoch_words / max(1e-3, cpu[1] - cpu[0])
        log("bench-mpi: %s: one core, dim %d: %.0fk words/s (CPU time of an epoch %.2f s)" % (
            posvec, dim, res["rate"][str(dim)] / 1e3, cpu[1] - cpu[0]))
    res["rate_method"] = RATE_METHOD


def measure(args, posvec, corpora, tmp):
    """Everything measured for one binary, as a dict (cached by the binary's hash)."""
    key = "mpi2-%s-x%d-d%d-r%s-s%d-e%d%s" % (
        sha(posvec), args.copies, args.dim, "_".join(map(str, args.ranks)), args.seeds,
        args.epochs, "-noq" if args.no_quality else "")
    cache = os.path.join(ROOT, "tools", "bench", "out", key + ".json")
    if args.reuse_cache and os.path.exists(cache):
        with open(cache) as f:
            res = json.load(f)
        log("bench-mpi: %s: results of %s from %s" % (posvec, res["date"], cache))
        if res.get("rate_method") != RATE_METHOD:  # measured the former way: again
            measure_rates(args, posvec, corpora[1], res, tmp)
            res["date"] += "; one core's rate %s" % datetime.datetime.utcnow().strftime(
                "%Y-%m-%d %H:%M UTC")
            with open(cache, "w") as f:
                json.dump(res, f, indent=1)
        return res
    brown, xn = corpora
    res = {"binary": posvec, "sha": sha(posvec), "date": datetime.datetime.utcnow()
           .strftime("%Y-%m-%d %H:%M UTC"), "load_start": os.getloadavg()[0], "traffic": {},
           "quality": {}, "rate": {}, "sweep": {}}
    measure_rates(args, posvec, xn, res, tmp)
    for p in args.ranks:
        cmd = mpi_cmd(args, p, train_cmd(posvec, xn, os.path.join(tmp, "t.bin"), 1, args.dim, 1,
                                         1))
        wall, out, err, sent = wire_run(args, cmd, tmp)
        t = parse_sync(err, p)
        t.update({"wall": wall, "wire_mb": sent / p / MB, "load": os.getloadavg()[0],
                  "vocab": json.loads(out)["words"]})
        res["traffic"][str(p)] = t
        log("bench-mpi: %s: %d ranks: %.1f MB per rank on the wire, own %s MB, %.1f s" %
            (posvec, p, t["wire_mb"], t["own_mb"], wall))
    # For the projection: how the traffic grows with the vocabulary and the dimension (4 ranks).
    for name, extra, dim, mc in (("V 7000", ["--max-vocab", "7000"], args.dim, 5),
                                 ("min-count 1", [], args.dim, 1),
                                 ("dim 300", [], 300, 5)):
        cmd = mpi_cmd(args, 4, train_cmd(posvec, xn, os.path.join(tmp, "t.bin"), 1, dim, 1, 1,
                                         mc) + extra)
        wall, out, err, sent = wire_run(args, cmd, tmp)
        t = parse_sync(err, 4)
        t.update({"wall": wall, "wire_mb": sent / 4 / MB, "dim": dim,
                  "vocab": json.loads(out)["words"]})
        res["sweep"][name] = t
        log("bench-mpi: %s: 4 ranks, %s: V %d, %.1f MB per rank on the wire, own %s MB" %
            (posvec, name, t["vocab"], t["wire_mb"], t["own_mb"]))
    if not args.no_quality:
        for p in [1] + args.ranks:
            scores = []
            for seed in range(1, args.seeds + 1):
                vec = os.path.join(tmp, "q.bin")
                cmd = train_cmd(posvec, brown, vec, 2 if p == 1 else 1, args.dim, args.epochs,
                                seed)
                run(cmd if p == 1 else mpi_cmd(args, p, cmd))
                scores.append(evaluate(vec, args.data))
            res["quality"][str(p)] = {k: [s[k] for s in scores] for k in QUALITY_KEYS}
            log("bench-mpi: %s: quality at %d rank(s): %s" % (
                posvec, p, ", ".join("%s %.3f" % (k, statistics.mean(v))
                                     for k, v in res["quality"][str(p)].items())))
    res["load_end"] = os.getloadavg()[0]
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache + ".tmp", "w") as f:
        json.dump(res, f, indent=1)
    os.replace(cache + ".tmp", cache)
    return res


def fmt(v, spec="%.1f"):
    return "-" if v is None else spec % v


def ratio(new, old):
    return "-" if new is None or old in (None, 0) else "%.2f" % (new / old)


def print_traffic(args, new, old, words):
    print("\nTraffic: Brown x%d (%d words), 1 epoch, dim %d, one thread a rank, Open MPI over TCP "
          "on loopback (shared memory off); MB sent per rank; b = baseline, n = new" %
          (args.copies, words, args.dim))
    print("| ranks | wire b | wire n | n/b | own b | own n | n/b | rounds b / n | "
          "waiting b / n | wall s b / n | n/b |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in args.ranks:
        n = new["traffic"][str(p)]
        o = old["traffic"][str(p)] if old else {}
        print("| %d | %s | %.1f | %s | %s | %s | %s | %s / %s | %s / %s | %s / %.1f | %s |" % (
            p, fmt(o.get("wire_mb")), n["wire_mb"], ratio(n["wire_mb"], o.get("wire_mb")),
            fmt(o.get("own_mb")), fmt(n["own_mb"]), ratio(n["own_mb"], o.get("own_mb")),
            fmt(o.get("rounds"), "%d"), fmt(n["rounds"], "%d"), fmt(o.get("waiting"), "%.0f %%"),
            fmt(n["waiting"], "%.0f %%"), fmt(o.get("wall")), n["wall"],
            ratio(n["wall"], o.get("wall"))))
    print("(own: MB per rank that posvec hands to MPI as send buffers, from the `sync:` line, or "
          "for a build that prints only the `synchronisation:` line the MB it reduces; an "
          "all-reduction puts about 2 (p - 1) / p times its buffer on the wire. Rounds of such a "
          "build: the frequent-row rounds, not the epoch-end exchange of all rows)")
    if old and "4" in new["traffic"]:
        r = new["traffic"]["4"]["wire_mb"] / old["traffic"]["4"]["wire_mb"]
        print("Bytes on the wire at 4 ranks: %.1f %% of the baseline's (target <= 25 %%): %s" %
              (100 * r, "met" if r <= 0.25 else "NOT met"))


def spread(vals):
    return "%.3f [%.3f, %.3f]" % (statistics.mean(vals), min(vals), max(vals))


def print_quality(args, new, old):
    if not new["quality"]:
        return
    print("\nQuality: Brown, %d epochs, dim %d, seeds 1..%d; mean [min, max]; one process has "
          "2 threads, MPI ranks 1 thread each" % (args.epochs, args.dim, args.seeds))
    print("| ranks | build | analogy | WordSim-353 | SimLex-999 | inside the one-process "
          "spread |")
    print("|---|---|---|---|---|---|")
    for build, res in (("baseline", old), ("new", new)):
        if not res or not res["quality"]:
            continue
        band = res["quality"]["1"]
        for p in [1] + args.ranks:
            q = res["quality"][str(p)]
            inside = "-" if p == 1 else ", ".join(
                "%s %s" % (k, "yes" if min(band[k]) <= statistics.mean(q[k]) else "no")
                for k in QUALITY_KEYS)
            print("| %s | %s | %s | %s | %s | %s |" % (
                "1 process" if p == 1 else p, build, spread(q["analogy"]),
                spread(q["wordsim353"]), spread(q["simlex999"]), inside))
    print("(inside: the mean over seeds is at least the one-process minimum; higher is better)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--baseline", metavar="PATH_TO_OLD_POSVEC",
                    help="a previous build, measured the same way and shown beside")
    ap.add_argument("--reuse-cache", action="store_true",
                    help="take a binary's results from tools/bench/out/ when its hash and the "
                         "settings match (the baseline need not be re-run)")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--mpirun-flags", default="", help="extra mpirun flags")
    shared = [os.path.join(ROOT, "..", "shared", "data"),  # beside the main checkout
              os.path.join(ROOT, "..", "..", "shared", "data")]  # beside a worktree's parent
    ap.add_argument("--data", default=os.environ.get("POSVEC_SHARED_DATA", next(
        (d for d in shared if os.path.isdir(d)), shared[0])),
                    help="evaluation data (questions-words.txt, wordsim353.tsv, simlex999.txt)")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--copies", type=int, default=4, help="Brown xN for the traffic runs")
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3, help="quality runs per setup")
    ap.add_argument("--epochs", type=int, default=5, help="epochs of the quality runs")
    ap.add_argument("--no-quality", action="store_true")
    args = ap.parse_args()
    args.ranks = [int(x) for x in args.ranks.split(",")]
    if not args.no_quality and not os.path.exists(os.path.join(args.data,
                                                               "questions-words.txt")):
        log("bench-mpi: no evaluation data in %s (pass --data DIR): quality not measured"
            % args.data)
        args.no_quality = True
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        sys.exit("bench-mpi: needs unshare and ip (util-linux, iproute2) to count bytes on a "
                 "private loopback")

    data_dir = os.path.join(HERE, "data")
    brown = os.path.join(data_dir, "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")],
                       check=True)
    xn = os.path.join(data_dir, "brown-x%d.txt" % args.copies)
    shuffled_copies(brown, xn, args.copies, args.copies, True)
    args.brown_words = count_words(brown)
    words = args.copies * args.brown_words
    tmp = tempfile.mkdtemp(prefix="bench-mpi-")
    try:
        old = measure(args, os.path.abspath(args.baseline), (brown, xn), tmp) \
            if args.baseline else None
        new = measure(args, os.path.abspath(args.posvec), (brown, xn), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print("bench-mpi: %s; commit %s; new %s (%s, %s, load average %.1f -> %.1f)%s" % (
        " ".join(["bench-mpi.sh"] + sys.argv[1:]), commit, new["binary"], new["sha"],
        new["date"], new["load_start"], new["load_end"],
        "; baseline %s (%s, %s, load average %.1f -> %.1f)" % (
            old["binary"], old["sha"], old["date"], old["load_start"], old["load_end"])
        if old else ""))
    print_traffic(args, new, old, words)
    print_quality(args, new, old)
    mpi_model.report(new, old, args.copies * args.brown_words, args.copies)


if __name__ == "__main__":
    main()
