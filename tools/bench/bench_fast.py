#!/usr/bin/python3
"""Batched skip-gram kernel against the classic kernel, gensim 4 and fastText, side
by side in one run (run through bench-fast.sh):
  throughput  Brown x16 (16 copies, lines shuffled in every copy after the first),
              1 epoch, dim 100 and 512: words/s of each whole training process,
              ratios against every peer, achieved GFLOP/s against the machine peak;
  scaling     words/s of the batched kernel at 1 and 2 threads;
  quality     Brown, 5 epochs, dim 100 and 512, 3 seeds: analogy accuracy,
              wordsim353 and SimLex-999 Spearman (gensim's own evaluation code),
              mean and seed-to-seed standard deviation.
Hyperparameters as in bench-train.sh: window 5, negative 5, sample 1e-4,
min-count 5, alpha 0.025 -> 0.0001. Corpus building, the gensim and fastText runners
and the evaluator are bench_train.py's."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench_train  # noqa: E402  (make_x16, count_words, timed, train, evaluate)


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


def run_posvec(kernel, corpus, out, dim, seed, threads, epochs, exe):
    cmd = [exe, corpus, out if out else "-", str(dim), str(epochs), str(threads), str(seed), kernel]
    wall, rss, stdout = bench_train.timed(cmd)
    info = json.loads(stdout.strip().splitlines()[-1])
    # The pair count for GFLOP/s runs after the vectors are written; it is not training.
    return wall - info["count_seconds"], rss, info


def train_any(trainer, corpus, out, dim, seed, threads, epochs, args):
    """(wall seconds, peak RSS MiB, vectors path or None, extra info)."""
    if trainer in ("batched", "classic"):
        wall, rss, info = run_posvec(trainer, corpus, out, dim, seed, threads, epochs,
                                     args.train_kernel)
        return wall, rss, out, info
    wall, rss, vec = bench_train.train(trainer, corpus, out, dim, seed, threads, epochs, None)
    return wall, rss, vec, {}


def throughput(args, work, x16, words, trainers):
    peak, how = peak_gflops(args.threads)
    print("\n== throughput: %s (%d words), 1 epoch, %d threads ==" % (os.path.basename(x16), words,
                                                                     args.threads))
    print("peak: %.0f GFLOP/s = %s" % (peak, how))
    for dim in args.dims:
        walls = {}
        for t in trainers:
            # Every trainer writes its text vectors inside the timed run.
            wall, rss, vec, info = train_any(t, x16, os.path.join(work, "%s-x16-%d.vec" % (t, dim)),
                                             dim, 1, args.threads, 1, args)
            if vec and os.path.exists(vec):
                os.remove(vec)
            walls[t] = wall
            line = "%-9s dim %3d  wall %7.1f s  %10.0f words/s  peak RSS %7.1f MiB" % (
                t, dim, wall, words / wall, rss)
            if info:
                # GFLOP/s over the epoch itself (vocabulary pass excluded): the kernels' work.
                line += "  |  epoch %6.1f s, %5.1f GFLOP/s = %4.1f%% of peak" % (
                    info["train_seconds"], info["gflops"], 100.0 * info["gflops"] / peak)
            print(line, flush=True)
        for mine in ("batched", "classic"):
            if mine not in walls:
                continue
            ratios = ["%s %.2fx" % (p, walls[p] / walls[mine]) for p in trainers if p != mine]
            print("  speed of %s relative to: %s" % (mine, ", ".join(ratios)), flush=True)


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
    print("\n== quality: Brown, %d epochs, %d threads, seeds %s ==" % (args.epochs, args.threads,
                                                                       args.seeds))
    keys = ("analogy", "wordsim353", "simlex999")
    for dim in args.dims:
        for t in trainers:
            runs = []
            for seed in args.seeds:
                out = os.path.join(work, "%s-%d-%d.vec" % (t, dim, seed))
                wall, _, vec, _ = train_any(t, brown, out, dim, seed, args.threads, args.epochs,
                                            args)
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
    # Shared evaluation data: --data, $POSVEC_SHARED_DATA, ../shared/data or /work/shared/data.
    default_data = os.environ.get("POSVEC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
    if not os.path.isdir(default_data) and os.path.isdir("/work/shared/data"):
        default_data = "/work/shared/data"
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--dims", default="100,512")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--trainers", default="batched,classic,gensim,fasttext")
    ap.add_argument("--quality-trainers", default="batched,classic,gensim")
    ap.add_argument("--parts", default="throughput,scaling,quality")
    ap.add_argument("--throughput-corpus", default=None,
                    help="another corpus for the throughput and scaling parts (a dry run)")
    args = ap.parse_args()
    args.dims = [int(d) for d in args.dims.split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    if not os.path.exists(args.train_kernel):
        sys.exit("bench-fast: %s not found (cmake --build build)" % args.train_kernel)
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "fetch-brown.sh")], check=True)
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
