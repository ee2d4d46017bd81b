#!/usr/bin/python3
"""Communication share of data-parallel training at 8 / 32 / 128 machines, calibrated with
what bench_mpi.py measured (bench-mpi.sh prints it; `mpi_model.py RESULTS.json [BASELINE.json]`
re-prints it from cached results in tools/bench/out/).

Per machine (one rank of c threads) and epoch of W words over p machines:

  computing      T_comp = (W / p) / (c * r1(d))
                 r1(d): words/s of one core at dim d, measured (one process, one thread)
  rounds         R = (W / p) / n
                 n: words a rank trains between two rounds, measured (words per rank / rounds)
  bytes a round  b = eta(p) * u(n) * d * 4
                 u(n): rows (input + output) a rank changes in n words, expected from the
                 vocabulary's counts (below); eta(p): bytes actually sent per changed row, in
                 fp32 rows, measured: eta = wire bytes per rank / (R * u(n) * d * 4) on
                 Brown xN at 2, 4 and 8 ranks, fitted as eta(p) = a * 2(p-1)/p + g * (p-1)
                 (a: what an all-reduce sends, g: what grows with the ranks, as an all-gather;
                 a, g >= 0). eta takes in the schedule (rows not due are not sent), 16-bit
                 deltas, row ids, message headers and the collective's own factor.
  communicating  T_comm = R * (b / B + 2 (p-1) * alpha), B the bandwidth, alpha = 5 us a step
  share          T_comm / (T_comm + T_comp)             (nothing overlapped)
  overlapped     max(0, T_comm - T_comp) / max(T_comm, T_comp)   (waiting, if exchanges run
                 entirely beside computing)

u(n): n words of the rank's share, subsampled (t = 1e-4, word2vec's keep probability) leave
m = kappa * n centre words; each updates its own input row and its output row as a context
(about 6 pairs, window 5) and 5 negatives a pair drawn from counts^0.75. With q the kept words'
distribution and q75 the negatives':
  u_in  = sum_w 1 - exp(-m q_w)
  u_out = sum_w 1 - exp(-(m q_w + 30 m q75_w))
(Poisson approximation of 'seen at least once'). Brown's counts come from the corpus;
the 1M-word vocabulary of the 1B-word case follows Zipf's law (count of rank r ~ 1 / r).

The baseline (hot rows every --sync-words, all rows each epoch) is also given by its own
formula (the former projection): b_hot = 2 * 4096 * d * 4 * 2(p-1)/p each round, plus
2 * V * d * 4 * 2(p-1)/p once an epoch."""
import collections
import json
import math
import sys

import numpy as np

ALPHA = 5e-6
MB = 2.0 ** 20
PAIRS = 6  # context pairs a kept centre word makes (window 5: mean reach 3, both sides)
NEG = 5
SAMPLE = 1e-4


def counts_of(path, min_count=5, copies=1):
    c = collections.Counter()
    with open(path, "rb") as f:
        for line in f:
            c.update(line.split())
    return np.array(sorted((copies * v for v in c.values() if copies * v >= min_count),
                           reverse=True), dtype=np.float64)


def zipf_counts(words, vocab):
    r = np.arange(1, vocab + 1, dtype=np.float64)
    return words / np.sum(1.0 / r) / r


def rows_changed(counts, n):
    """Expected rows (input, output) one rank changes in n words of its share."""
    total = counts.sum()
    f = counts / total
    keep = np.minimum(1.0, (np.sqrt(f / SAMPLE) + 1) * SAMPLE / f)
    kept = f * keep
    kappa = kept.sum()
    q = kept / kappa
    q75 = counts ** 0.75
    q75 /= q75.sum()
    m = kappa * n
    u_in = np.sum(-np.expm1(-m * q))
    u_out = np.sum(-np.expm1(-(m * q + PAIRS * NEG * m * q75)))
    return float(u_in), float(u_out)


def fit_eta(points):
    """Least squares eta(p) = a * 2(p-1)/p + g * (p-1), a, g >= 0."""
    xs = [(2 * (p - 1) / p, p - 1.0, e) for p, e in points]
    best = None
    for mode in ("both", "a", "g"):
        if mode == "both" and len(xs) >= 2:
            A = np.array([[x1, x2] for x1, x2, _ in xs])
            y = np.array([e for *_, e in xs])
            sol, *_ = np.linalg.lstsq(A, y, rcond=None)
            a, g = float(sol[0]), float(sol[1])
            if a < 0 or g < 0:
                continue
        elif mode == "a":
            a = sum(x1 * e for x1, _, e in xs) / sum(x1 * x1 for x1, _, _ in xs)
            g = 0.0
        elif mode == "g":
            a = 0.0
            g = sum(x2 * e for _, x2, e in xs) / sum(x2 * x2 for _, x2, _ in xs)
        else:
            continue
        err = sum((a * x1 + g * x2 - e) ** 2 for x1, x2, e in xs)
        if best is None or err < best[2]:
            best = (a, g, err)
    return best[0], best[1]


def calibrate(res, corpus_words, brown_counts, dim):
    """eta(p) and n from the traffic runs of one build."""
    points, ns = [], []
    for p, t in sorted(res["traffic"].items(), key=lambda kv: int(kv[0])):
        p = int(p)
        if not t.get("rounds"):
            continue
        per_rank = corpus_words / p
        n = per_rank / t["rounds"]
        u = sum(rows_changed(brown_counts, n))
        eta = t["wire_mb"] * MB / (t["rounds"] * u * dim * 4)
        points.append((p, eta))
        ns.append((p, n, u, eta))
    if not points:
        return None
    a, g = fit_eta(points)
    return {"a": a, "g": g, "points": ns, "n": float(np.median([n for _, n, _, _ in ns]))}


def project_case(cal, counts, words, dim, cores, r1, gbits=(10, 100), machines=(8, 32, 128)):
    rows = []
    u = sum(rows_changed(counts, cal["n"]))
    for gbit in gbits:
        bw = gbit * 1e9 / 8
        for p in machines:
            eta = cal["a"] * 2 * (p - 1) / p + cal["g"] * (p - 1)
            b = eta * u * dim * 4
            rounds = words / p / cal["n"]
            comm = rounds * (b / bw + 2 * (p - 1) * ALPHA)
            comp = words / p / (cores * r1)
            rows.append((p, gbit, b / MB, rounds, comm, comp, comm / (comm + comp),
                         max(0.0, comm - comp) / max(comm, comp)))
    return u, rows


def project_old(counts, words, dim, cores, r1, sync_words=100000, hot=4096,
                gbits=(10, 100), machines=(8, 32, 128)):
    """The former schedule's own formula (dense all-reduce of the hot rows, all rows once an
    epoch), for comparison."""
    rows = []
    vocab = len(counts)
    for gbit in gbits:
        bw = gbit * 1e9 / 8
        for p in machines:
            f = 2 * (p - 1) / p
            lat = 2 * (p - 1) * ALPHA
            t_hot = 2 * min(hot, vocab) * dim * 4 * f / bw + lat
            t_all = 2 * vocab * dim * 4 * f / bw + lat
            rounds = max(0.0, words / p / sync_words - 1)
            comm = rounds * t_hot + t_all
            comp = words / p / (cores * r1)
            rows.append((p, gbit, comm / (comm + comp)))
    return rows


def report(new, old, corpus_words, brown_path, dim, ranks):
    brown = counts_of(brown_path)
    brown16 = counts_of(brown_path, copies=16)
    big = zipf_counts(1e9, 1_000_000)
    brown_words = corpus_words  # Brown xN of the traffic runs
    cases = [("(a) Brown x16: %.1fM words, V %dk, dim 100, 2 cores a machine (like this one)" %
              (brown16.sum() / 1e6, len(brown16) // 1000), brown16, float(brown16.sum()), 100, 2),
             ("(b) 1B words, V 1M (Zipf), dim 300, 32 cores a machine", big, 1e9, 300, 32)]
    print("\nProjection (mpi_model.py; formula in its docstring): communication share of an "
          "epoch, nothing overlapped [waiting if exchanges overlap computing fully]")
    for build, res in (("new", new), ("baseline", old)):
        if not res:
            continue
        cal = calibrate(res, brown_words, brown, dim)
        if cal is None:
            print("  %s: no rounds reported, no calibration" % build)
            continue
        print("  %s build: calibrated on Brown x%d (%d words), dim %d: one core %.0fk words/s "
              "at dim 100, %.0fk at dim 300; n = %.0f words a rank between rounds; eta(p) = "
              "%.3f * 2(p-1)/p + %.4f * (p-1)" % (
                  build, round(corpus_words / brown.sum()), corpus_words, dim,
                  res["rate"]["100"] / 1e3, res["rate"]["300"] / 1e3, cal["n"], cal["a"],
                  cal["g"]))
        for p, n, u, eta in cal["points"]:
            t = res["traffic"][str(p)]
            print("    measured at %d ranks: %d rounds, %.1f MB per rank on the wire, n = %.0f "
                  "words, u(n) = %.0f rows, eta = %.3f (fit %.3f)" % (
                      p, t["rounds"], t["wire_mb"], n, u, eta,
                      cal["a"] * 2 * (p - 1) / p + cal["g"] * (p - 1)))
        for title, counts, words, d, cores in cases:
            r1 = res["rate"][str(d)]
            u, rows = project_case(cal, counts, words, d, cores, r1)
            print("  %s, %s: %.0fk words/s a machine, u(n) = %.0f rows a round" % (
                build, title, cores * r1 / 1e3, u))
            print("    | machines | network | MB a round | rounds an epoch | comm. s | "
                  "computing s | share [overlapped] |")
            print("    |---|---|---|---|---|---|---|")
            for p, gbit, mb, rounds, comm, comp, share, ov in rows:
                print("    | %d | %d Gbit/s | %.2f | %.0f | %.2f | %.2f | %.0f %% [%.0f %%] |" % (
                    p, gbit, mb, rounds, comm, comp, 100 * share, 100 * ov))
            if build == "baseline" or (old is None and new.get("traffic", {}).get("2", {})
                                       .get("waiting") is None):
                old_rows = project_old(counts, words, d, cores, r1)
                print("    former schedule by its own formula (dense, --sync-words 100000): " +
                      ", ".join("%d machines %d Gbit/s %.0f %%" % (p, g, 100 * s)
                                for p, g, s in old_rows))
    if new and new["traffic"]:
        cal = calibrate(new, brown_words, brown, dim)
        if cal:
            _, rows = project_case(cal, big, 1e9, 300, 32, new["rate"]["300"])
            share = [s for p, g, *_, s, _ in rows if p == 32 and g == 10][0]
            print("Projected share for 1B words / V 1M / dim 300 at 32 machines on 10 Gbit/s: "
                  "%.0f %% (target <= 20 %%): %s" % (100 * share,
                                                     "met" if share <= 0.20 else "NOT met"))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        new_res = json.load(f)
    old_res = None
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            old_res = json.load(f)
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    brown_file = os.path.join(here, "data", "brown.txt")
    copies = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    n_words = copies * int(counts_of(brown_file, min_count=1).sum())
    report(new_res, old_res, n_words, brown_file, 100, [2, 4, 8])
