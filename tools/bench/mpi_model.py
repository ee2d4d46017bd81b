#!/usr/bin/python3
"""Communication share of data-parallel training at 8 / 32 / 128 machines, calibrated with
what bench_mpi.py measured on one machine (bench-mpi.sh prints it; `mpi_model.py NEW.json
[BASELINE.json]` prints it again from the results cached in tools/bench/out/).

Model, per machine (one rank of c threads) and epoch of W words over p machines:

  bytes a rank sends   S(p) = f(p) * (R * x + y)
      R  rounds an epoch = (W / p) / n, n the words a rank trains between two rounds
      x  bytes a round, y bytes once an epoch (before the collective's factor)
      f  the collective's factor: 2 (p - 1) / p (all-reduce, ring) or p - 1 (all-gather,
         every rank's part to every other), whichever fits the measurements better
  computing            T_comp = (W / p) / (c * r1(d)),  r1(d) one core's words/s at dim d
  communicating        T_comm = S(p) / B + R * 2 (p - 1) * alpha  (B bandwidth, alpha 5 us a step)
  share                T_comm / (T_comm + T_comp)      nothing overlapped
  [overlapped]         max(0, T_comm - T_comp) / max(T_comm, T_comp)   exchanges entirely beside
                       computing: the share of the wall time spent waiting

Inputs, all measured by bench_mpi.py with the build's default synchronisation settings:
  - n, x, y: from the bytes on the wire per rank at 2, 4 and 8 ranks (Brown xN, 1 epoch, dim
    d0) and the rounds posvec reports: least squares of S(p) / f(p) = R(p) x + y, x, y >= 0;
    n = median of (words a rank) / R(p);
  - how x grows with the vocabulary V: 4-rank runs at three vocabulary sizes (--max-vocab 7000,
    the default --min-count 5, --min-count 1), y taken as proportional to V (a once-an-epoch
    exchange of whole matrices); x(V) = x0 (V / V0)^gamma, gamma fitted;
  - how both grow with the dimension: a 4-rank run at dim 300, (d / d0)^delta;
  - r1(100), r1(300): one process, one thread, Brown xN: words of an epoch / CPU seconds of an
    epoch (CPU of a 2-epoch run minus a 1-epoch run), so other load on the machine does not
    lower it.
Cores are assumed to scale linearly (c * r1), and the network to carry B both ways at once.

The baseline (hot rows every --sync-words, all rows each epoch) is also given by its own formula
(the projection of the former docs) as a check of the calibration."""
import json
import math
import os
import statistics
import sys

ALPHA = 5e-6
EPOCHS = 5  # a run's epochs, for the once-a-run exchange
MB = 2.0 ** 20
FACTORS = {"all-reduce": lambda p: 2 * (p - 1) / p, "all-gather": lambda p: p - 1.0}


def lsq_nonneg(rows):
    """Least squares of z = R x + y with x, y >= 0; rows are (R, z)."""
    n = len(rows)
    best = None
    cands = []
    if n >= 2:
        mr = sum(r for r, _ in rows) / n
        mz = sum(z for _, z in rows) / n
        var = sum((r - mr) ** 2 for r, _ in rows)
        if var > 0:
            x = sum((r - mr) * (z - mz) for r, z in rows) / var
            cands.append((x, mz - x * mr))
    cands.append((sum(r * z for r, z in rows) / sum(r * r for r, _ in rows), 0.0))
    cands.append((0.0, sum(z for _, z in rows) / n))
    for x, y in cands:
        if x < 0 or y < 0:
            continue
        err = sum((r * x + y - z) ** 2 for r, z in rows)
        if best is None or err < best[2]:
            best = (x, y, err)
    return best


def calibrate(res, corpus_words, dim0=100):
    pts = [(int(p), t) for p, t in res["traffic"].items() if t.get("rounds")]
    if not pts:
        return None
    best = None
    for name, f in FACTORS.items():
        rows = [(t["rounds"], t["wire_mb"] * MB / f(p)) for p, t in pts]
        x, y, err = lsq_nonneg(rows)
        rel = math.sqrt(sum(((r * x + y) - z) ** 2 / z ** 2 for r, z in rows) / len(rows))
        if best is None or rel < best["rel"]:
            best = {"factor": name, "x": x, "y": y, "rel": rel}
    f = FACTORS[best["factor"]]
    best["n"] = statistics.median(corpus_words / p / t["rounds"] for p, t in pts)
    best["points"] = [(p, t["rounds"], t["wire_mb"],
                       f(p) * (t["rounds"] * best["x"] + best["y"]) / MB) for p, t in pts]
    v0 = res["traffic"]["4"]["vocab"]
    best["v0"] = v0
    # Vocabulary: x(V) from the 4-rank runs, y proportional to V.
    vx = []
    for key in ("V 7000", "min-count 1"):
        t = res.get("sweep", {}).get(key)
        if not t or not t.get("rounds"):
            continue
        v = t["vocab"]
        xv = (t["wire_mb"] * MB / f(4) - best["y"] * v / v0) / t["rounds"]
        vx.append((v, xv))
    best["sweep"] = vx
    logs = [(math.log(v / v0), math.log(xv / best["x"])) for v, xv in vx
            if xv > 0 and best["x"] > 0 and v != v0]
    best["gamma"] = (sum(a * b for a, b in logs) / sum(a * a for a, _ in logs)) if logs else 1.0
    # Dimension: both terms alike.
    t = res.get("sweep", {}).get("dim 300")
    t4 = res["traffic"]["4"]
    if t and t.get("wire_mb"):
        best["delta"] = math.log(t["wire_mb"] / t4["wire_mb"]) / math.log(t["dim"] / dim0)
    else:
        best["delta"] = 1.0
    best["dim0"] = dim0
    # y: the sparse schedule's last round (every changed row, once a run) for a build with the
    # `sync:` line; the all-rows exchange at every epoch's end for the former schedule.
    best["y_scope"] = "run" if t4.get("own_kind") == "sent" else "epoch"
    return best


def project(cal, words, vocab, dim, cores, r1, interval=1.0, epochs=EPOCHS, gbits=(10, 100),
            machines=(8, 32, 128)):
    """interval: words between rounds as a multiple of the measured n."""
    f = FACTORS[cal["factor"]]
    ds = (dim / cal["dim0"]) ** cal["delta"]
    x = cal["x"] * (vocab / cal["v0"]) ** cal["gamma"] * ds
    y = cal["y"] * (vocab / cal["v0"]) * ds
    out = []
    for gbit in gbits:
        bw = gbit * 1e9 / 8
        for p in machines:
            rounds = words / p / (cal["n"] * interval)
            per_epoch_y = y if cal["y_scope"] == "epoch" else 0.0
            sent = f(p) * (rounds * x + per_epoch_y)
            comm = sent / bw + rounds * 2 * (p - 1) * ALPHA
            comp = words / p / (cores * r1)
            final = 0.0 if cal["y_scope"] == "epoch" else f(p) * y / bw + 2 * (p - 1) * ALPHA
            run_comm = epochs * comm + final
            out.append({"p": p, "gbit": gbit, "x": x, "y": y, "rounds": rounds, "sent": sent,
                        "comm": comm, "comp": comp, "share": comm / (comm + comp),
                        "overlapped": max(0.0, comm - comp) / max(comm, comp), "final": final,
                        "run_share": run_comm / (run_comm + epochs * comp)})
    return out


def project_old(words, vocab, dim, cores, r1, sync_words=100000, hot=4096,
                gbits=(10, 100), machines=(8, 32, 128)):
    """The former schedule by its own formula: dense all-reduce of the 4096 + 4096 most
    frequent rows every --sync-words words a rank, all rows once an epoch."""
    out = []
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
            out.append((p, gbit, comm / (comm + comp)))
    return out


CASES = [("(a) Brown x16: 18.6M words, V 49.8k, dim 100, 2 cores a machine (like this one)",
          16 * 1161192, 49815, 100, 2),
         ("(b) 1B words, V 1M, dim 300, 32 cores a machine", 1e9, 1_000_000, 300, 32)]


def report(new, old, corpus_words, copies):
    print("\nProjection (tools/bench/mpi_model.py, formula and inputs in its docstring): "
          "communication share of an epoch, nothing overlapped [waiting if exchanges overlap "
          "computing fully]")
    target = []
    for build, res in (("new", new), ("baseline", old)):
        if not res:
            continue
        cal = calibrate(res, corpus_words)
        if cal is None:
            print("  %s: no rounds reported, no calibration" % build)
            continue
        print("  %s build, calibrated on Brown x%d (%d words): %s; x = %.2f MB a round, y = %.2f "
              "MB once %s (V0 %d, dim %d; fit within %.0f %%); n = %.0f words a rank between "
              "rounds; x ~ V^%.2f; bytes ~ dim^%.2f; one core %.0fk words/s at dim 100, %.0fk at "
              "dim 300" % (build, copies, corpus_words, cal["factor"], cal["x"] / MB, cal["y"] / MB,
                           "a run" if cal["y_scope"] == "run" else "an epoch", cal["v0"], cal["dim0"], 100 * cal["rel"], cal["n"], cal["gamma"],
                           cal["delta"], res["rate"]["100"] / 1e3, res["rate"]["300"] / 1e3))
        print("    measured (model) MB per rank: " + ", ".join(
            "%d ranks %d rounds %.1f (%.1f)" % (p, r, m, fit) for p, r, m, fit in cal["points"])
            + "; 4 ranks, x at V " + ", ".join("%d: %.2f MB" % (v, xv / MB)
                                               for v, xv in cal["sweep"]))
        for title, words, vocab, dim, cores in CASES:
            r1 = res["rate"][str(dim)]
            intervals = [(1.0, "the measured interval")]
            if cal["y_scope"] == "run" and cores > 1:
                intervals.append((float(cores), "%d times it (as many words a core between "
                                  "rounds as a one-thread rank; quality not measured)" % cores))
            for interval, what in intervals:
                rows = project(cal, words, vocab, dim, cores, r1, interval)
                print("  %s, %s: %.0fk words/s a machine; rounds every %.0fk words a machine "
                      "(%s); x %.2f MB a round, y %.0f MB once %s" % (
                          build, title, cores * r1 / 1e3, interval * cal["n"] / 1e3, what,
                          rows[0]["x"] / MB, rows[0]["y"] / MB,
                          "an epoch" if cal["y_scope"] == "epoch" else "a run (the last round)"))
                print("    | machines | network | rounds an epoch | MB sent a machine an epoch | "
                      "comm. s an epoch | computing s an epoch | epoch share [overlapped] | "
                      "last round s | share of a %d-epoch run |" % EPOCHS)
                print("    |---|---|---|---|---|---|---|---|---|")
                for r in rows:
                    print("    | %d | %d Gbit/s | %.0f | %.0f | %.3f | %.3f | %.0f %% [%.0f %%] | "
                          "%.2f | %.0f %% |" % (
                              r["p"], r["gbit"], r["rounds"], r["sent"] / MB, r["comm"], r["comp"],
                              100 * r["share"], 100 * r["overlapped"], r["final"],
                              100 * r["run_share"]))
                    if build == "new" and words == 1e9 and r["p"] == 32 and r["gbit"] == 10:
                        target.append((what, r["share"], r["run_share"]))
            if build == "baseline" or old is None:
                print("    former schedule by its own formula: " + ", ".join(
                    "%d/%d Gbit/s %.0f %%" % (p, g, 100 * s)
                    for p, g, s in project_old(words, vocab, dim, cores, r1)))
    for what, share, run_share in target:
        print("Projected share for 1B words / V 1M / dim 300 at 32 machines on 10 Gbit/s, %s: "
              "%.0f %% of an epoch, %.0f %% of a %d-epoch run (target <= 20 %%): %s" % (
                  what.split(" (")[0], 100 * share, 100 * run_share, EPOCHS,
                  "met" if max(share, run_share) <= 0.20 else "NOT met"))


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        new_res = json.load(fh)
    old_res = None
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as fh:
            old_res = json.load(fh)
    copies_n = int(os.environ.get("BENCH_MPI_COPIES", "4"))
    report(new_res, old_res, copies_n * 1161192, copies_n)
