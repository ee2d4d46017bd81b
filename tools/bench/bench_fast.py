#!/usr/bin/python3
"""Batched skip-gram kernel against the classic kernel, gensim 4 and fastText, side
by side in one run (run through bench-fast.sh):
  throughput  Brown x16 (16 copies, lines shuffled in every copy after the first),
              1 epoch, dim 100 and 512, end to end (counting, training, writing
              the binary vectors): gensim, posvec built from an earlier commit
              ("previous", --previous-commit) and this posvec's CLI ("posvec"),
              medians of --repeats alternating runs, ratios against every peer;
  efficiency  the training epoch alone, as `posvec train` runs it (its epoch line) and
              as train_kernel times it, alternating, medians of --repeats: GFLOP/s
              and their fraction of this machine's measured FMA peak (fma_peak,
              same threads); then the blocks of 4 timed in two halves, alternating:
              without their arithmetic (train_kernel's `memory` mode: rows read and
              written, prefetches, set-up) and without waiting for rows (`cache`
              mode: set-up and arithmetic on rows that stay in cache). An epoch can
              overlap the halves but not beat the longer one, so the flops over it
              bound the efficiency from above;
  scaling     words/s of the batched kernel at 1 and 2 threads;
  quality     Brown, 5 epochs, dim 100 and 512, 3 seeds: analogy accuracy,
              wordsim353 and SimLex-999 Spearman (gensim's own evaluation code),
              mean and seed-to-seed standard deviation. By default on Brown's lines
              shuffled once (fixed seed; Brown's file is ordered by genre, and which
              genre comes last and which thread reads which half moves SimLex-999 by
              more than the kernels differ), with gensim fed as a stream (its
              corpus_file mode decays the learning rate only part of the way with
              more than one worker); --quality-order file and --quality-gensim file
              give the earlier set-up.
Hyperparameters as in bench-train.sh: window 5, negative 5, sample 1e-4,
min-count 5, alpha 0.025 -> 0.0001. Corpus building, the gensim and fastText runners
and the evaluator are bench_train.py's."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench_train  # noqa: E402  (make_x16, shuffled_copies, count_words, timed, train, evaluate)
from bench_common import labelled  # noqa: E402


def measured_peak(threads):
    """FP32 FMA peak of `threads` threads, measured by fma_peak (GFLOP/s)."""
    exe = os.path.join(ROOT, "build", "fma_peak")
    r = subprocess.run([exe, str(threads), "2"], capture_output=True, text=True, check=True)
    info = json.loads(r.stdout.strip().splitlines()[-1])
    return info["peak_gflops"], "measured by fma_peak: %.1f GFLOP/s AVX-512, %.1f AVX2, %d threads" % (
        info["avx512_gflops"], info["avx2_gflops"], threads)


def build_previous(commit):
    """posvec's CLI built from `commit` (git archive, no checkout) in tools/bench/out."""
    base = os.path.join(HERE, "out", "previous-%s" % commit[:12])
    exe = os.path.join(base, "build", "posvec")
    if os.path.exists(exe):
        return exe
    src = os.path.join(base, "src")
    os.makedirs(src, exist_ok=True)
    archive = subprocess.run(["git", "-C", ROOT, "archive", commit], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    subprocess.run(["cmake", "-S", src, "-B", os.path.join(base, "build"),
                    "-DCMAKE_BUILD_TYPE=Release", "-DPOSVEC_BUILD_BENCH=OFF"] + launcher,
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", os.path.join(base, "build"), "-j2", "--target",
                    "posvec_cli"], check=True, stdout=subprocess.DEVNULL)
    return exe


def peak_gflops(threads):
    """FP32 peak of `threads` cores from lscpu/cpuinfo, with the assumption stated."""
    flags = open("/proc/cpuinfo").read()
    mhz = float(re.search(r"cpu MHz\s*:\s*([\d.]+)", flags).group(1))
    model = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    zen = "AuthenticAMD" in model and re.search(r"CPU family:\s*25", model)
    if "avx512f" in flags and zen:
        # Zen 4 runs a 512-bit FMA as two 256-bit halves on its two FMA pipes:
        # 2 pipes x 8 lanes x 2 flops = 32 flops/cycle/core.
        per_cycle, why = 32, "Zen 4: 2 FMA pipes x 256 bit (AVX-512 double-pumped)"
    elif "avx512f" in flags:
        per_cycle, why = 64, "2 x 512-bit FMA units"
    elif "fma" in flags:
        per_cycle, why = 32, "2 x 256-bit FMA units"
    else:
        per_cycle, why = 8, "SSE, no FMA"
    peak = threads * per_cycle * mhz / 1000.0
    return peak, "%d cores x %d flops/cycle (%s) x %.0f MHz (nominal, no boost)" % (
        threads, per_cycle, why, mhz)


def run_posvec(kernel, corpus, out, dim, seed, threads, epochs, exe, combine=1, weights="fp32"):
    """train_kernel; kernel "combined" is the batched kernel in blocks of `combine`
    centre words (automatic shared negatives); "memory" and "cache" are that kernel
    without its arithmetic and without its waiting for rows (nothing trains).
    weights: the matrices' storage (fp32, bf16, fp16)."""
    mode = kernel if kernel in ("classic", "memory", "cache") else "batched"
    cmd = [exe, corpus, out if out else "-", str(dim), str(epochs), str(threads), str(seed),
           mode, "1e-4", str(combine if kernel in ("combined", "memory", "cache") else 1)]
    if weights != "fp32":
        cmd += ["0", weights]  # automatic shared negatives, then the weight type
    wall, rss, stdout = bench_train.timed(cmd)
    info = json.loads(stdout.strip().splitlines()[-1])
    return wall, rss, info


def train_any(trainer, corpus, out, dim, seed, threads, epochs, args, gensim_mode="file"):
    """(wall seconds, peak RSS MiB, vectors path or None, extra info)."""
    if trainer in ("batched", "classic", "combined"):
        wall, rss, info = run_posvec(trainer, corpus, out, dim, seed, threads, epochs,
                                     args.train_kernel, args.combine)
        return wall, rss, out, info
    wall, rss, vec = bench_train.train(trainer, corpus, out, dim, seed, threads, epochs, None,
                                       gensim_mode)
    return wall, rss, vec, {}


def run_cli(exe, corpus, out, dim, threads, extra=()):
    """End to end through the CLI: counting, training, writing the binary vectors."""
    cmd = [exe, "--quiet", "train", corpus, "--pretokenized", "-o", out, "--dim", str(dim),
           "--window", "5", "--negative", "5", "--sample", "1e-4", "--min-count", "5",
           "--alpha", "0.025", "--epochs", "1", "--threads", str(threads), "--seed", "1"]
    cmd += list(extra)
    wall, rss, _ = bench_train.timed(cmd)
    return wall, rss


def throughput(args, work, x16, words, trainers):
    print("\n== throughput: %s (%d words), 1 epoch, %d threads, end to end (binary output), "
          "median of %d alternating runs ==" % (os.path.basename(x16), words, args.threads,
                                                args.repeats))
    exes = {"posvec": os.path.join(ROOT, "build", "posvec"),
            "window": os.path.join(ROOT, "build", "posvec")}
    extra = {"window": ["--combine", "1"]}
    if "window" in trainers:
        print("posvec: posvec train with its defaults (blocks of 4 centre words)")
        print("window: posvec train --combine 1 (one window per block, the default before "
              "context combining)")
    if "previous" in trainers:
        exes["previous"] = build_previous(args.previous_commit)
        print("previous: posvec built from commit %s" % args.previous_commit)
    for dim in args.dims:
        walls = {t: [] for t in trainers}
        rsss = {t: [] for t in trainers}
        cores = {t: [] for t in trainers}  # the host's placement of the cores around each run
        for rep in range(args.repeats):
            # Alternate the order so drifting load does not favour one trainer.
            order = trainers if rep % 2 == 0 else list(reversed(trainers))
            for t in order:
                out = os.path.join(work, "%s-x16-%d.bin" % (t, dim))
                if t in exes:
                    (wall, rss), _, _, state = labelled(args.shared_rows, lambda: run_cli(
                        exes[t], x16, out, dim, args.threads, extra.get(t, ())))
                else:
                    (wall, rss, vec, _), _, _, state = labelled(args.shared_rows, lambda: train_any(
                        t, x16, out, dim, 1, args.threads, 1, args))
                    out = vec
                cores[t].append(state)
                if out and os.path.exists(out):
                    os.remove(out)
                walls[t].append(wall)
                rsss[t].append(rss)
        med = {t: statistics.median(walls[t]) for t in trainers}
        print("%-9s %5s %10s %12s %12s   %s" % ("trainer", "dim", "wall s", "words/s",
                                               "peak RSS", "runs"))
        for t in trainers:
            print("%-9s %5d %10.1f %12.0f %8.1f MiB   %s" % (
                t, dim, med[t], words / med[t], max(rsss[t]),
                " ".join("%.1f" % w for w in walls[t])), flush=True)
        for ours in ("posvec", "window"):
            if ours in med:
                ratios = ["%s %.2fx" % (p, med[p] / med[ours]) for p in trainers if p != ours]
                print("  speed of %s (dim %d) relative to: %s" % (ours, dim, ", ".join(ratios)),
                      flush=True)
        # The same ratios from the runs with the cores near (and far) throughout.
        if None not in sum(cores.values(), []):
            print("  cores around each run: %s" % "; ".join(
                "%s %s" % (t, " ".join(cores[t])) for t in trainers), flush=True)
            for state in ("near", "far"):
                kept = {t: [w for w, c in zip(walls[t], cores[t]) if c == state]
                        for t in trainers}
                for ours in ("posvec", "window"):
                    if ours in kept and kept[ours]:
                        ratios = ["%s %.2fx" % (p, statistics.median(kept[p]) /
                                                statistics.median(kept[ours]))
                                  for p in trainers if p != ours and kept[p]]
                        if ratios:
                            print("  cores %s, speed of %s (dim %d) relative to: %s" % (
                                state, ours, dim, ", ".join(ratios)), flush=True)


def cli_epoch(exe, corpus, dim, threads, seed=1, extra=()):
    """The CLI's own training phase: `posvec train` as in the throughput part (binary
    output), its "epoch 1 done: ... in S s" line parsed; returns (epoch s, wall s)."""
    out = tempfile.mktemp(suffix=".bin", prefix="posvec-bench-eff-")
    cmd = ["/usr/bin/time", "-f", "wall %e", exe, "train", corpus, "--pretokenized", "-o", out,
           "--dim", str(dim), "--window", "5", "--negative", "5", "--sample", "1e-4",
           "--min-count", "5", "--alpha", "0.025", "--epochs", "1", "--threads", str(threads),
           "--seed", str(seed)] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if os.path.exists(out):
        os.remove(out)
    if r.returncode != 0:
        sys.exit("bench-fast: command failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    epoch = re.search(r"epoch 1 done: .* in ([\d.]+) s", r.stderr)
    wall = re.search(r"^wall ([\d.]+)$", r.stderr, re.M)
    return float(epoch.group(1)), float(wall.group(1))


def efficiency(args, x16):
    """GFLOP/s of the training phase of `posvec train` itself. The flops come from the
    pairs the library trained (train_kernel prints EpochReport::predictions; with the
    same seed and threads the CLI trains the same pairs), the seconds from the CLI's
    epoch line and from train_kernel's, in alternating runs (medians), so a busy core
    during one run cannot make the figure (a 2-thread epoch has static halves: one
    shared core makes it up to twice as long)."""
    peak, how = measured_peak(args.threads)
    exe = os.path.join(ROOT, "build", "posvec")
    print("\n== efficiency: the training epoch of %s, %d threads, `posvec train` and train_kernel "
          "alternating, median of %d runs each, weights %s ==" % (
              os.path.basename(x16), args.threads, args.repeats, args.weights))
    print("peak: %.1f GFLOP/s (%s)" % (peak, how))
    print("flops per window: 6 x dim x (negative + 1) x contexts (scores, output-row and "
          "input-row gradients); contexts counted by the trainer. Combined blocks are counted "
          "the same way (the (context, centre) pairs they train, each against negative + 1 "
          "targets), not by the products they execute")
    for dim in args.dims:
        for kernel in args.efficiency_kernels:
            extra = ["--combine", str(args.combine) if kernel == "combined" else "1"]
            if args.weights != "fp32":
                extra += ["--weights", args.weights]
            cli, tk, pairs = [], [], None
            # The host's placement of the two cores around each run (near, far, mixed).
            cores = {"cli": [], "tk": [], "memory": [], "cache": []}
            for rep in range(args.repeats):
                for what in (("cli", "tk") if rep % 2 == 0 else ("tk", "cli")):
                    if what == "cli":
                        epoch, _, _, state = labelled(args.shared_rows, lambda: cli_epoch(
                            exe, x16, dim, args.threads, extra=extra)[0])
                        cli.append(epoch)
                    else:
                        (_, _, info), _, _, state = labelled(args.shared_rows, lambda: run_posvec(
                            kernel, x16, None, dim, 1, args.threads, 1, args.train_kernel,
                            args.combine, args.weights))
                        tk.append(info["train_seconds"])
                        pairs = info["pairs"]
                    cores[what].append(state)
            flops = pairs * 6.0 * 6 * dim  # negative 5: 6 targets
            words = info["words"]
            label = "combine %d" % (args.combine if kernel == "combined" else 1)
            for name, runs in (("posvec train", cli), ("train_kernel", tk)):
                med = statistics.median(runs)
                print("dim %3d  %-10s %-12s epoch %6.2f s  %10.0f words/s  %6.1f GFLOP/s = %4.1f%% "
                      "of measured peak   (runs %s)" % (
                          dim, label, name, med, words / med, flops / med * 1e-9,
                          100.0 * flops / med * 1e-9 / peak, " ".join("%.2f" % t for t in runs)),
                      flush=True)
            if kernel == "combined":
                # The same blocks in two halves: without the arithmetic (rows, prefetches,
                # set-up) and without the waiting (set-up and arithmetic on cached rows).
                # However well an epoch overlaps them it takes at least the longer, so the
                # flops over that time bound the efficiency from above.
                halves = {"memory": [], "cache": []}
                for rep in range(args.repeats):
                    for mode in (("memory", "cache") if rep % 2 == 0 else ("cache", "memory")):
                        (_, _, info), _, _, state = labelled(args.shared_rows, lambda: run_posvec(
                            mode, x16, None, dim, 1, args.threads, 1, args.train_kernel,
                            args.combine, args.weights))
                        cores[mode].append(state)
                        halves[mode].append(info["train_seconds"])
                        assert info["pairs"] == pairs, "%s-only run trained other pairs" % mode
                        # The memory half computes nothing; the cache half trains its stand-in.
                        assert (info["final_loss"] == 0) == (mode == "memory"), \
                            "%s-only run did not take its path (loss %g)" % (mode,
                                                                             info["final_loss"])
                what = {"memory": "rows, prefetches and set-up, no arithmetic",
                        "cache": "set-up and arithmetic on cached rows, no waiting"}
                for mode in ("memory", "cache"):
                    med = statistics.median(halves[mode])
                    print("dim %3d  %-10s %-12s epoch %6.2f s  (%s): %6.1f GFLOP/s = %4.1f%% "
                          "of measured peak   (runs %s)" % (
                              dim, label, mode + " only", med, what[mode], flops / med * 1e-9,
                              100.0 * flops / med * 1e-9 / peak,
                              " ".join("%.2f" % t for t in halves[mode])), flush=True)
                floor = max(statistics.median(halves[m]) for m in halves)
                print("dim %3d  %-10s ceiling: no overlap of the halves beats %.2f s, "
                      "%.1f%% of measured peak" % (dim, label, floor,
                                                   100.0 * flops / floor * 1e-9 / peak),
                      flush=True)
                # The restated target: the epoch against that bound (bound / epoch).
                for name, runs in (("posvec train", cli), ("train_kernel", tk)):
                    print("dim %3d  %-10s %-12s epoch at %.1f%% of the %s bound (%.2f s / %.2f s)"
                          % (dim, label, name, 100.0 * floor / statistics.median(runs),
                             "float32" if args.weights == "fp32" else args.weights, floor,
                             statistics.median(runs)), flush=True)
                # Other tenants of the host slow whole runs down: the fastest runs of the
                # epoch and of the halves, each the least disturbed of its kind.
                fast = max(min(halves[m]) for m in halves)
                for name, runs in (("posvec train", cli), ("train_kernel", tk)):
                    print("dim %3d  %-10s %-12s fastest runs: epoch at %.1f%% of the %s bound "
                          "(%.2f s / %.2f s)" % (dim, label, name, 100.0 * fast / min(runs),
                                                 "float32" if args.weights == "fp32"
                                                 else args.weights, fast, min(runs)), flush=True)
                # The same from the runs with the cores near (and far) throughout: each half
                # and the epoch compared within one state of the host.
                if None not in sum(cores.values(), []):
                    print("dim %3d  %-10s cores near/far/mixed around each run: posvec train %s; "
                          "train_kernel %s; memory only %s; cache only %s" % (
                              dim, label, " ".join(cores["cli"]), " ".join(cores["tk"]),
                              " ".join(cores["memory"]), " ".join(cores["cache"])), flush=True)
                    series = {"cli": cli, "tk": tk, "memory": halves["memory"],
                              "cache": halves["cache"]}
                    for state in ("near", "far"):
                        kept = {k: [t for t, c in zip(series[k], cores[k]) if c == state]
                                for k in series}
                        if not (kept["memory"] and kept["cache"]):
                            continue
                        bound = max(statistics.median(kept["memory"]),
                                    statistics.median(kept["cache"]))
                        for name, k in (("posvec train", "cli"), ("train_kernel", "tk")):
                            if kept[k]:
                                print("dim %3d  %-10s %-12s cores %s: epoch at %.1f%% of the "
                                      "bound (%.2f s / %.2f s; %d, %d and %d runs)" % (
                                          dim, label, name, state,
                                          100.0 * bound / statistics.median(kept[k]), bound,
                                          statistics.median(kept[k]), len(kept[k]),
                                          len(kept["memory"]), len(kept["cache"])), flush=True)


def scaling(args, x16, words):
    print("\n== scaling: batched kernel, %s, 1 epoch ==" % os.path.basename(x16))
    print("%-5s %-8s %12s %12s %9s" % ("dim", "threads", "words/s", "epoch s", "GFLOP/s"))
    for dim in args.dims:
        base = None
        for threads in (1, 2):
            wall, _, info = run_posvec("batched", x16, None, dim, 1, threads, 1, args.train_kernel)
            wps = info["epoch_words_per_second"]
            base = base or wps
            print("%-5d %-8d %12.0f %12.1f %9.1f   (x%.2f)" % (dim, threads, wps,
                                                             info["train_seconds"],
                                                             info["gflops"], wps / base),
                  flush=True)


def quality(args, work, brown, trainers):
    corpus = brown
    if args.quality_order == "shuffled":
        corpus = os.path.join(HERE, "data", "brown-shuffled.txt")
        bench_train.shuffled_copies(brown, corpus, 1, 1, False)  # Brown's lines, one order
    print("\n== quality: Brown (%s), %d epochs, %d threads, seeds %s, gensim %s ==" % (
        "lines shuffled" if args.quality_order == "shuffled" else "file order", args.epochs,
        args.threads, args.seeds,
        "as a stream" if args.quality_gensim == "stream" else "from corpus_file"))
    keys = ("analogy", "wordsim353", "simlex999")
    for dim in args.dims:
        for t in trainers:
            runs = []
            for seed in args.seeds:
                out = os.path.join(work, "%s-%d-%d.vec" % (t, dim, seed))
                wall, _, vec, _ = train_any(t, corpus, out, dim, seed, args.threads, args.epochs,
                                            args, args.quality_gensim)
                runs.append({"wall": wall, **bench_train.evaluate(vec, args.data)})
                os.remove(vec)
            line = "%-9s dim %3d  wall %6.1f s" % (t, dim, statistics.mean(r["wall"] for r in runs))
            for k in keys:
                vals = [r[k] for r in runs]
                sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
                line += "  %s %.4f ± %.4f" % (k, statistics.mean(vals), sd)
            line += "  (per seed: %s)" % "; ".join(
                ",".join("%.4f" % r[k] for k in keys) for r in runs)
            print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-kernel", default=os.path.join(ROOT, "build", "train_kernel"))
    ap.add_argument("--shared-rows", default=os.path.join(ROOT, "build", "shared_rows"),
                    help="the line round-trip probe that labels each run with the host's state")
    # Shared evaluation data: --data, $POSVEC_SHARED_DATA, ../shared/data or /work/shared/data.
    default_data = os.environ.get("POSVEC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
    if not os.path.isdir(default_data) and os.path.isdir("/work/shared/data"):
        default_data = "/work/shared/data"
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--dims", default="100,512")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--trainers", default="gensim,previous,posvec,window",
                    help="throughput columns: gensim, fasttext, previous, posvec (its "
                         "defaults), window (posvec train --combine 1)")
    ap.add_argument("--combine", type=int, default=4,
                    help="centre words per block of the 'combined' kernel (efficiency and "
                         "quality parts; 'batched' there is --combine 1)")
    ap.add_argument("--efficiency-kernels", default="batched,combined",
                    help="efficiency part: batched (--combine 1) and/or combined (blocks of "
                         "--combine, then the two halves and the bound)")
    ap.add_argument("--weights", default="fp32", choices=("fp32", "bf16", "fp16"),
                    help="storage of the matrices in the efficiency part (posvec train "
                         "--weights and train_kernel's WEIGHTS argument)")
    ap.add_argument("--previous-commit", default="9dd9276",
                    help="the posvec commit of the 'previous' column")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quality-trainers", default="batched,combined,classic,gensim")
    ap.add_argument("--quality-order", choices=("shuffled", "file"), default="shuffled",
                    help="quality corpus: Brown's lines shuffled once (fixed seed) or in "
                         "file order (by genre)")
    ap.add_argument("--quality-gensim", choices=("stream", "file"), default="stream",
                    help="gensim's input in the quality part: a LineSentence stream (the "
                         "configured decay) or corpus_file (decays 1/workers of the way)")
    ap.add_argument("--parts", default="throughput,efficiency,scaling,quality")
    ap.add_argument("--throughput-corpus", default=None,
                    help="another corpus for the throughput and scaling parts (a dry run)")
    args = ap.parse_args()
    args.dims = [int(d) for d in args.dims.split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.efficiency_kernels = args.efficiency_kernels.split(",")
    if not os.path.exists(args.train_kernel):
        sys.exit("bench-fast: %s not found (cmake --build build)" % args.train_kernel)
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")], check=True)
    if args.throughput_corpus:
        x16 = args.throughput_corpus
        words = bench_train.count_words(x16)
    else:
        x16 = os.path.join(HERE, "data", "brown-x16.txt")
        bench_train.make_x16(brown, x16)
        words = bench_train.count_words(brown) * 16
    print("bench-fast: load average %s (the machine may be shared; timings are rough)" %
          " ".join(open("/proc/loadavg").read().split()[:3]))
    work = tempfile.mkdtemp(prefix="posvec-bench-fast-")
    parts = args.parts.split(",")
    if "throughput" in parts:
        throughput(args, work, x16, words, args.trainers.split(","))
    if "efficiency" in parts:
        efficiency(args, x16)
    if "scaling" in parts:
        scaling(args, x16, words)
    if "quality" in parts:
        if not os.path.exists(os.path.join(args.data, "questions-words.txt")):
            print("quality: skipped (no %s/questions-words.txt)" % args.data)
        else:
            quality(args, work, brown, args.quality_trainers.split(","))
    print("bench-fast: load average at the end %s" %
          " ".join(open("/proc/loadavg").read().split()[:3]))
    if not os.listdir(work):
        os.rmdir(work)


if __name__ == "__main__":
    main()
