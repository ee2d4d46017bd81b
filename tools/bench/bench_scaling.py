#!/usr/bin/python3
"""Cost as the corpus grows (run through bench-scaling.sh): a synthetic Zipf corpus
(exponent 1, up to --vocab distinct words) is generated on the fly by zipf_corpus
and piped into `posvec train -` (never stored), 1 epoch, dim 100, window 5,
negative 5, sample 1e-4, min-count 5, 2 threads, binary output. For each size:
end-to-end words/s, peak RSS of the posvec process, and the memory left after
the two matrices per distinct word counted. Writes an SVG plot of words/s."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(args, words, work):
    work = work or tempfile.gettempdir()  # --estimate writes nothing
    out = os.path.join(work, "v.bin")
    timing = os.path.join(work, "time")
    train = [args.posvec, "train", "-", "--pretokenized", "-o", out, "--dim", str(args.dim),
             "--epochs", "1", "--threads", str(args.threads), "--min-count", "5", "--window", "5",
             "--negative", "5", "--sample", "1e-4", "--seed", "1"]
    if args.weights != "fp32":
        train += ["--weights", args.weights]
    if args.estimate:
        return estimate(args, words, train)
    cmd = "%s %d %d 1.0 1 | /usr/bin/time -f '%%M %%e' -o %s %s" % (
        args.zipf, words, args.vocab, timing, " ".join(train))
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench-scaling: %s failed:\n%s" % (cmd, r.stderr[-2000:]))
    rss_kib, wall = open(timing).read().split()[-2:]
    m = re.search(r"vocabulary: (\d+) words kept of (\d+) distinct", r.stderr)
    kept, distinct = int(m.group(1)), int(m.group(2))
    os.remove(out)
    rss = int(rss_kib) * 1024
    matrices = 2 * kept * args.dim * (4 if args.weights == "fp32" else 2)
    return {"words": words, "wall": float(wall), "wps": words / float(wall), "rss": rss,
            "kept": kept, "distinct": distinct, "matrices": matrices,
            "per_distinct": (rss - matrices) / distinct, "rss_per_distinct": rss / distinct}


def estimate(args, words, train):
    """`posvec train --dry-run --json` on the same stream: the trainer's memory
    estimate (the corpus is counted, nothing trained)."""
    cmd = "%s %d %d 1.0 1 | %s --dry-run --json" % (args.zipf, words, args.vocab,
                                                  " ".join(train[:1] + ["--quiet"] + train[1:]))
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench-scaling: %s failed:\n%s" % (cmd, r.stderr[-2000:]))
    j = json.loads(r.stdout)
    print("%12d  dry run (%s): %s" % (words, args.weights, json.dumps(j, sort_keys=True)),
          flush=True)
    return None


def svg(points, path, title):
    w, h, left, right, top, bottom = 560, 320, 70, 20, 40, 50
    xs = [p["words"] for p in points]
    ys = [p["wps"] / 1e6 for p in points]
    import math
    lx = [math.log10(x) for x in xs]
    x0, x1 = math.floor(min(lx)), math.ceil(max(lx))
    if x1 == x0:
        x1 = x0 + 1
    y1 = max(ys) * 1.25
    px = lambda v: left + (math.log10(v) - x0) / (x1 - x0) * (w - left - right)
    py = lambda v: h - bottom - v / y1 * (h - top - bottom)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, title),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, h - bottom, w - right,
                                                                     h - bottom),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top, left, h - bottom)]
    for e in range(x0, x1 + 1):
        x = px(10 ** e)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>' % (x, top, x,
                                                                                 h - bottom))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">1e%d</text>' % (x, h - bottom + 16, e))
    steps = 5
    for i in range(steps + 1):
        v = y1 * i / steps
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (left - 6, py(v) + 4, v))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (left, py(v),
                                                                                w - right, py(v)))
    out.append('<text x="%d" y="%d" text-anchor="middle">corpus words (log scale)</text>' % (
        (left + w - right) // 2, h - 12))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">'
               'million words/s (end to end)</text>' % ((top + h - bottom) // 2,
                                                        (top + h - bottom) // 2))
    pts = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in zip(xs, ys))
    out.append('<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>' % pts)
    for x, y in zip(xs, ys):
        out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="#1f77b4"/>' % (px(x), py(y)))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%.2f</text>' % (px(x), py(y) - 8,
                                                                                y))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--zipf", default=os.path.join(ROOT, "build", "zipf_corpus"))
    ap.add_argument("--sizes", default="10e6,100e6", help="corpus words (add 1e9 for the long run)")
    ap.add_argument("--vocab", type=float, default=5e6, help="distinct words of the distribution")
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--svg", default=os.path.join(ROOT, "tools", "bench", "scaling.svg"))
    ap.add_argument("--weights", default="fp32", choices=("fp32", "bf16", "fp16"),
                    help="storage of the matrices while training (posvec train --weights)")
    ap.add_argument("--estimate", action="store_true",
                    help="print posvec's --dry-run memory estimate for each size instead of "
                         "training (counts the corpus only; no plot)")
    args = ap.parse_args()
    args.vocab = int(args.vocab)
    for exe in (args.posvec, args.zipf):
        if not os.path.exists(exe):
            sys.exit("bench-scaling: %s not found (cmake --build build)" % exe)
    print("bench-scaling: load average %s (the machine may be shared; timings are rough)" %
          " ".join(open("/proc/loadavg").read().split()[:3]))
    print("Zipf corpus (exponent 1, %d-word distribution) piped through stdin, dim %d, %d threads,"
          " 1 epoch, weights %s" % (args.vocab, args.dim, args.threads, args.weights))
    if args.estimate:
        for size in (int(float(s)) for s in args.sizes.split(",")):
            estimate_only = run(args, size, None)
            assert estimate_only is None
        return
    # Peak memory is the larger of the counting pass (its table holds every distinct
    # word) and training (the matrices and the kept words): both ratios are printed.
    print("%12s %9s %12s %10s %10s %11s %11s %13s %13s" % (
        "words", "wall s", "words/s", "distinct", "kept", "peak RSS", "matrices",
        "RSS/distinct", "(RSS-mat)/dist"))
    points = []
    with tempfile.TemporaryDirectory(prefix="posvec-scaling-") as work:
        for size in (int(float(s)) for s in args.sizes.split(",")):
            p = run(args, size, work)
            points.append(p)
            print("%12d %9.1f %12.0f %10d %10d %8.1f MiB %8.1f MiB %11.1f B %11.1f B" % (
                p["words"], p["wall"], p["wps"], p["distinct"], p["kept"], p["rss"] / 2**20,
                p["matrices"] / 2**20, p["rss_per_distinct"], p["per_distinct"]), flush=True)
    first, last = points[0], points[-1]
    print("words/s from %d to %d words: %.0f -> %.0f (x%.2f)" % (
        first["words"], last["words"], first["wps"], last["wps"], last["wps"] / first["wps"]))
    os.makedirs(os.path.dirname(args.svg), exist_ok=True)
    svg(points, args.svg, "posvec train, Zipf corpus through stdin, dim %d, %d threads" % (
        args.dim, args.threads))
    print("plot: %s" % args.svg)


if __name__ == "__main__":
    main()
