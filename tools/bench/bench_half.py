#!/usr/bin/python3
"""16-bit weights against float32, side by side in one run (run through bench-half.sh):
  throughput  Brown x16 (bench_train.make_x16), 1 epoch, --threads threads, dims 100
              and 512, end to end through the CLI (counting, training, writing the
              binary vectors): `posvec train` as it is (float32, the default) and with
              `--weights bf16` / `--weights fp16`, medians of --repeats runs in
              alternating order (forward, then reversed, ...), wall time and peak RSS
              (/usr/bin/time -v), the epoch's own seconds (the CLI's "epoch 1 done"
              line), and each ratio against the float32 runs of the same run, with
              the targets of the 16-bit issue (speed >= 1.2x at dim 100 and >= 1.4x
              at dim 512, peak memory <= 0.55x at dim 512);
  quality     Brown (lines shuffled once, as bench-fast.sh does), --epochs epochs,
              seeds --seeds, dims 100 and 512: fp32, bf16, fp16 and gensim 4 fed as a
              stream (the spread to compare with), scored by eval_vectors.py (analogy
              accuracy on questions-words, Spearman on WordSim-353 and SimLex-999):
              mean, min..max and standard deviation per cell, and whether each 16-bit
              mean lies within float32's min..max and gensim's;
  large-throughput  (not in the default parts) the throughput part on the 100M-word
              corpus of `large` (about a million distinct words: matrices far larger
              than the caches, where the rows' bytes are what the epoch waits for);
  large       (not in the default parts) 1 epoch over 100M words: Brown x16 among
              synthetic Zipf sentences (zipf_corpus, built with the benchmarks), the
              --quality-trainers (gensim skipped) at --dims, seeds --seeds, the same
              scores: whether 16 bits hold on a corpus of a size where they matter.
When the posvec binary does not accept --weights (or accepts it and trains the same
bits as float32), the 16-bit columns are skipped with the reason, and only float32
(and gensim) are measured. --save FILE keeps every quality run as JSON; --load FILE
adds the cells of an earlier run that this run does not measure (say so in a table).
bf16:pairs and bf16:halves (in --weights and --quality-trainers) run bfloat16 with one
in-place update kernel each (POSVEC_BF16_UPDATE), both on one machine.
Hyperparameters as in bench-train.sh: window 5, negative 5, sample 1e-4, min-count 5,
alpha 0.025 -> 0.0001."""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench_train  # noqa: E402  (make_x16, shuffled_copies, count_words, train, evaluate)
from bench_common import labelled, placement, time_v

HALF = ("bf16", "fp16")
KEYS = ("analogy", "wordsim353", "simlex999")
TARGET_SPEED = {100: 1.2, 512: 1.4}
TARGET_MEMORY = {512: 0.55}


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def timed(cmd):
    """cmd under /usr/bin/time -v: (wall s, peak RSS MiB, stderr without time's lines)."""
    wall, rss, r = time_v(cmd, "bench-half")
    return wall, rss, r.stderr


def weight_flags(weights):
    """fp32 is the CLI's default: no flag, so the float32 column is posvec as users run it."""
    base = weights.split(":")[0]
    return [] if base == "fp32" else ["--weights", base]


def with_update(weights, fn):
    """fn() with POSVEC_BF16_UPDATE set for "bf16:pairs" / "bf16:halves" (the in-place
    bfloat16 update kernel; design/16-bit-weights.md), unset otherwise."""
    saved = os.environ.pop("POSVEC_BF16_UPDATE", None)
    if ":" in weights:
        os.environ["POSVEC_BF16_UPDATE"] = weights.split(":")[1]
    try:
        return fn()
    finally:
        os.environ.pop("POSVEC_BF16_UPDATE", None)
        if saved is not None:
            os.environ["POSVEC_BF16_UPDATE"] = saved


def train_cmd(exe, corpus, out, dim, seed, threads, epochs, weights, quiet):
    return ([exe] + (["--quiet"] if quiet else []) +
            ["train", corpus, "--pretokenized", "-o", out, "--dim", str(dim), "--window", "5",
             "--negative", "5", "--sample", "1e-4", "--min-count", "5", "--alpha", "0.025",
             "--epochs", str(epochs), "--threads", str(threads), "--seed", str(seed)] +
            weight_flags(weights))


def supported_weights(exe, brown, work):
    """The weight types this binary trains, and why any is missing. A short run per type
    on Brown's first 2000 lines, one thread: one that fails does not exist; one that
    writes the same bits as float32 is accepted but not acted on."""
    small = os.path.join(work, "probe.txt")
    with open(brown, encoding="utf-8") as f, open(small, "w", encoding="utf-8") as out:
        for i, line in enumerate(f):
            if i >= 2000:
                break
            out.write(line)
    vectors, missing = {}, {}
    for w in ("fp32",) + HALF:
        out = os.path.join(work, "probe-%s.bin" % w)
        cmd = [exe, "--quiet", "train", small, "--pretokenized", "-o", out, "--dim", "16",
               "--min-count", "1", "--epochs", "1", "--threads", "1", "--seed", "1"] + \
            weight_flags(w)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            lines = r.stderr.strip().splitlines()
            missing[w] = "`%s` fails: %s" % (" ".join(cmd[2:3] + weight_flags(w)),
                                             lines[0] if lines else "exit %d" % r.returncode)
            continue
        vectors[w] = open(out, "rb").read()
        os.remove(out)
    for w in HALF:
        if w in vectors and vectors[w] == vectors.get("fp32"):
            missing[w] = "--weights %s trains the same bits as float32 (accepted, not acted on)" % w
            del vectors[w]
    os.remove(small)
    return [w for w in ("fp32",) + HALF if w in vectors], missing


def throughput(args, work, x16, words, weights, targets=True):
    """Brown x16 (or the corpus given) as the 16-bit issue measures it; `targets`: print
    whether the ratios meet that issue's targets (set for Brown x16)."""
    print("\n== throughput: %s (%d words), 1 epoch, %d threads, end to end (binary output), "
          "median of %d alternating runs, load average %s ==" % (
              os.path.basename(x16), words, args.threads, args.repeats, loadavg()))
    for dim in args.dims:
        walls = {w: [] for w in weights}
        epochs = {w: [] for w in weights}
        rsss = {w: [] for w in weights}
        trips = {w: [] for w in weights}
        for rep in range(args.repeats):
            # Alternate the order so drifting load does not favour one weight type.
            for w in (weights if rep % 2 == 0 else list(reversed(weights))):
                out = os.path.join(work, "x16-%s-%d.bin" % (w.replace(":", "-"), dim))
                (wall, rss, err), before, after, _ = labelled(
                    args.shared_rows, lambda: with_update(w, lambda: timed(train_cmd(
                        args.posvec, x16, out, dim, 1, args.threads, 1, w, quiet=False))))
                trips[w].append((before, after))
                os.remove(out)
                m = re.search(r"epoch 1 done: .* in ([\d.]+) s", err)
                walls[w].append(wall)
                rsss[w].append(rss)
                epochs[w].append(float(m.group(1)) if m else float("nan"))
        med = {w: statistics.median(walls[w]) for w in weights}
        ep = {w: statistics.median(epochs[w]) for w in weights}
        mem = {w: statistics.median(rsss[w]) for w in weights}
        width = max(7, max(len(w) for w in weights))
        print("%-*s %4s %8s %11s %8s %12s   %-18s %s" % (width,
            "weights", "dim", "wall s", "words/s", "epoch s", "peak RSS", "wall runs",
            "RSS runs (MiB)"))
        for w in weights:
            print("%-*s %4d %8.2f %11.0f %8.2f %8.1f MiB   %-18s %s" % (width,
                w, dim, med[w], words / med[w], ep[w], mem[w],
                " ".join("%.2f" % x for x in walls[w]), " ".join("%.1f" % x for x in rsss[w])),
                flush=True)
        for w in weights:
            if w == "fp32":
                continue
            speed, epoch, memory = med["fp32"] / med[w], ep["fp32"] / ep[w], mem[w] / mem["fp32"]
            target = " (target >= %.1fx: %s)" % (
                TARGET_SPEED.get(dim, 1.0),
                "met" if speed >= TARGET_SPEED.get(dim, 1.0) else "NOT met") if targets else ""
            line = "  %s / fp32 (dim %d): speed %.2fx end to end%s, epoch alone %.2fx, peak RSS " \
                   "%.2fx" % (w, dim, speed, target, epoch, memory)
            if targets and dim in TARGET_MEMORY:
                line += " (target <= %.2fx: %s)" % (
                    TARGET_MEMORY[dim], "met" if memory <= TARGET_MEMORY[dim] else "NOT met")
            print(line, flush=True)
            # Other tenants of the host slow whole runs down (user CPU time grows with
            # the wall time): the fastest run of each is the least disturbed.
            print("  %s / fp32 (dim %d): fastest runs %.2fx end to end (%.2f s / %.2f s), epoch "
                  "alone %.2fx" % (w, dim, min(walls["fp32"]) / min(walls[w]), min(walls["fp32"]),
                                   min(walls[w]), min(epochs["fp32"]) / min(epochs[w])),
                  flush=True)
            # The two runs of a repeat follow each other, so the host's state (which can
            # change inside a run and moves both types' times by up to 2x) is mostly the
            # same for both: their ratio, repeat by repeat, shows it.
            pairs = [a / b for a, b in zip(walls["fp32"], walls[w])]
            print("  %s / fp32 (dim %d): each repeat's pair %s, median %.2fx" % (
                w, dim, " ".join("%.2fx" % r for r in pairs), statistics.median(pairs)),
                  flush=True)
            # The host's state around each run (the line round trip before and after it):
            # the pairs whose two runs both had the cores near, and both far, apart.
            cores = {k: [placement(*t) for t in trips[k]] for k in ("fp32", w)}
            if None not in cores["fp32"] + cores[w]:
                print("  line round trip before / after each run (ns): %s" % "; ".join(
                    "fp32 %.0f/%.0f, %s %.0f/%.0f" % (a + (w,) + b)
                    for a, b in zip(trips["fp32"], trips[w])), flush=True)
                for name in ("near", "far"):
                    kept = [r for r, a, b in zip(pairs, cores["fp32"], cores[w])
                            if a == name and b == name]
                    if kept:
                        print("  %s / fp32 (dim %d): pairs run with the cores %s %s, median "
                              "%.2fx" % (w, dim, name, " ".join("%.2fx" % r for r in kept),
                                         statistics.median(kept)), flush=True)
    print("load average after throughput: %s" % loadavg())


def quality_runs(args, work, corpus, trainer, dim):
    runs = []
    for seed in args.seeds:
        out = os.path.join(work, "q-%s-%d-%d.vec" % (trainer.replace(":", "-"), dim, seed))
        if trainer == "gensim":
            _, _, vec = bench_train.train("gensim", corpus, out, dim, seed, args.threads,
                                          args.epochs, None, "stream")
        else:
            with_update(trainer, lambda: subprocess.run(
                train_cmd(args.posvec, corpus, out, dim, seed, args.threads, args.epochs,
                          trainer, quiet=True), check=True))
            vec = out
        q = bench_train.evaluate(vec, args.data)
        q["seed"] = seed
        runs.append(q)
        os.remove(vec)
    return runs


def cell(runs, k):
    vals = [r[k] for r in runs]
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return statistics.mean(vals), min(vals), max(vals), sd


def quality(args, work, brown, trainers, earlier):
    corpus = os.path.join(HERE, "data", "brown-shuffled.txt")
    bench_train.shuffled_copies(brown, corpus, 1, 1, False)  # bench-fast.sh's quality corpus
    print("\n== quality: Brown (lines shuffled once), %d epochs, %d threads, seeds %s, gensim as a "
          "stream, load average %s ==" % (args.epochs, args.threads,
                                          ",".join(map(str, args.seeds)), loadavg()))
    results = {}
    for dim in args.dims:
        for t in trainers:
            key = "%s/%d" % (t, dim)
            results[key] = quality_runs(args, work, corpus, t, dim)
            print("  measured %s dim %d: %s" % (t, dim, "; ".join(
                "seed %d %s" % (r["seed"], ",".join("%.4f" % r[k] for k in KEYS))
                for r in results[key])), flush=True)
            save(args.save, results)  # after every cell: a stopped run keeps what it measured
    for key, runs in earlier.items():
        if key not in results:
            results[key] = runs
            print("  %s: loaded from %s (an earlier run)" % (key, args.load))
    print("| dim | weights | analogy | WordSim-353 | SimLex-999 |")
    print("|---|---|---|---|---|")
    variants = [t for t in trainers if t not in ("fp32", "gensim")] + \
        [t for t in HALF if t not in trainers]
    order = ["fp32"] + variants + ["gensim"]
    for dim in args.dims:
        for t in order:
            runs = results.get("%s/%d" % (t, dim))
            if not runs:
                continue
            cells = ["%.4f (%.4f..%.4f, sd %.4f)" % cell(runs, k) for k in KEYS]
            name = "gensim 4 (stream)" if t == "gensim" else t
            print("| %d | %s | %s |" % (dim, name, " | ".join(cells)), flush=True)
    for dim in args.dims:
        for t in variants:
            runs = results.get("%s/%d" % (t, dim))
            if not runs:
                continue
            verdicts = []
            for k in KEYS:
                mean = cell(runs, k)[0]
                for ref in ("fp32", "gensim"):
                    other = results.get("%s/%d" % (ref, dim))
                    if other:
                        _, lo, hi, _ = cell(other, k)
                        verdicts.append("%s %s %s's range" % (
                            k, "within" if lo <= mean <= hi else
                            ("ABOVE" if mean > hi else "BELOW"), ref))
            print("  %s dim %d: %s" % (t, dim, "; ".join(verdicts)), flush=True)
    print("load average after quality: %s" % loadavg())
    return results


def large_corpus(brown, zipf, path, words=100_000_000, copies=16):
    """Brown's lines in `copies` shuffled copies, and synthetic Zipf sentences (zipf_corpus:
    exponent 1, 1M distinct words w0, w1, ...) up to `words` words, all lines shuffled
    together (fixed seeds); kept if it exists."""
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return
    part = path + ".brown"
    bench_train.shuffled_copies(brown, part, 100, copies, False)
    have = bench_train.count_words(part)
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        gen = subprocess.run([zipf, str(words - have), "1000000", "1.0", "7"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        out.write(gen)
    with open(part) as f:
        lines = f.readlines()
    with open(tmp) as f:
        lines += f.readlines()
    random.Random(101).shuffle(lines)
    with open(tmp, "w") as out:
        out.writelines(lines)
    os.replace(tmp, path)
    os.remove(part)


def large(args, work, brown, trainers):
    """Analogy (and the word-pair scores) after 1 epoch over 100M words: Brown x16 inside
    a synthetic Zipf corpus, whose words (w<rank>) share nothing with the test sets."""
    corpus = os.path.join(HERE, "data", "brown-zipf-100m.txt")
    large_corpus(brown, args.zipf, corpus)
    print("\n== large: %s (100M words: Brown x16 and Zipf sentences, lines shuffled), 1 epoch, "
          "%d threads, seeds %s, load average %s ==" % (
              os.path.basename(corpus), args.threads, ",".join(map(str, args.seeds)), loadavg()))
    results = {}
    saved_epochs = args.epochs
    args.epochs = 1
    for dim in args.dims:
        for t in trainers:
            runs = quality_runs(args, work, corpus, t, dim)
            results["%s/%d" % (t, dim)] = runs
            cells = ["%.4f (%.4f..%.4f)" % cell(runs, k)[:3] for k in KEYS]
            print("| %d | %s | %s |" % (dim, t, " | ".join(cells)), flush=True)
    args.epochs = saved_epochs
    print("load average after large: %s" % loadavg())
    return results


def save(path, results):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    default_data = os.environ.get("POSVEC_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
    if not os.path.isdir(default_data) and os.path.isdir("/work/shared/data"):
        default_data = "/work/shared/data"
    ap.add_argument("--data", default=default_data,
                    help="directory with questions-words.txt, wordsim353.tsv, simlex999.txt")
    ap.add_argument("--parts", default="throughput,quality")
    ap.add_argument("--dims", default="100,512")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--weights", default="fp32,bf16,fp16",
                    help="weight types to measure (fp32 is always measured: the ratios need it)")
    ap.add_argument("--epochs", type=int, default=5, help="quality part")
    ap.add_argument("--seeds", default="1,2,3,4,5", help="quality part")
    ap.add_argument("--quality-trainers", default="fp32,bf16,fp16,gensim")
    ap.add_argument("--save", help="write the quality runs (JSON) to this file")
    ap.add_argument("--load", help="add the quality cells of an earlier --save not measured now")
    ap.add_argument("--shared-rows", default=os.path.join(ROOT, "build", "shared_rows"),
                    help="the line round-trip probe that labels each run with the host's state")
    ap.add_argument("--zipf", default=os.path.join(ROOT, "build", "zipf_corpus"),
                    help="the synthetic corpus generator of the large part")
    args = ap.parse_args()
    args.dims = [int(d) for d in args.dims.split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    if not os.path.exists(args.posvec):
        sys.exit("bench-half: %s not found (cmake --build build --target posvec_cli)" % args.posvec)
    brown = os.path.join(HERE, "data", "brown.txt")
    if not os.path.exists(brown):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh")],
                       check=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    print("bench-half: commit %s%s, load average %s (the machine may be shared; timings are "
          "rough)" % (commit, " (modified)" if dirty else "", loadavg()))
    work = tempfile.mkdtemp(prefix="posvec-bench-half-")
    have, missing = supported_weights(args.posvec, brown, work)
    for w, why in missing.items():
        print("bench-half: %s not measured: %s" % (w, why))
    wanted = ["fp32"] + [w for w in args.weights.split(",")
                         if w.split(":")[0] in HALF and w.split(":")[0] in have]
    parts = args.parts.split(",")
    if "throughput" in parts:
        x16 = os.path.join(HERE, "data", "brown-x16.txt")
        bench_train.make_x16(brown, x16)
        throughput(args, work, x16, bench_train.count_words(brown) * 16, wanted)
    if "quality" in parts:
        if not os.path.exists(os.path.join(args.data, "questions-words.txt")):
            print("quality: skipped (no %s/questions-words.txt)" % args.data)
        else:
            trainers = [t for t in args.quality_trainers.split(",")
                        if t == "gensim" or t.split(":")[0] in have]
            earlier = json.load(open(args.load)) if args.load else {}
            save(args.save, quality(args, work, brown, trainers, earlier))
    if "large-throughput" in parts:
        if not os.path.exists(args.zipf):
            print("large-throughput: skipped (no %s: build the benchmarks, -DPOSVEC_BUILD_BENCH=ON)"
                  % args.zipf)
        else:
            corpus = os.path.join(HERE, "data", "brown-zipf-100m.txt")
            large_corpus(brown, args.zipf, corpus)
            throughput(args, work, corpus, bench_train.count_words(corpus), wanted, targets=False)
    if "large" in parts:
        if not os.path.exists(os.path.join(args.data, "questions-words.txt")):
            print("large: skipped (no %s/questions-words.txt)" % args.data)
        elif not os.path.exists(args.zipf):
            print("large: skipped (no %s: build the benchmarks, -DPOSVEC_BUILD_BENCH=ON)"
                  % args.zipf)
        else:
            large(args, work, brown, [t for t in args.quality_trainers.split(",")
                                      if t.split(":")[0] in have])
    print("bench-half: load average at the end %s" % loadavg())
    if not os.listdir(work):
        os.rmdir(work)


if __name__ == "__main__":
    main()
