#!/usr/bin/python3
"""Data-parallel skip-gram in NumPy, to compare rules for combining the ranks' changes of a
row before building one into posvec's MPI mode.

N ranks each train on their own share of the corpus's lines (contiguous, as `mpirun -np N
posvec train` splits it), with the rules of staleness_sim.py (word2vec's subsampling, window
shrink, negatives, linearly decaying learning rate by each rank's own progress) in batches of
B trained words (B = 500 is one process's quality there). Every R trained words a rank
(a round), every row of both matrices is combined: each rank's change since the last round,
Delta_r, goes into one change applied to the shared start, and every rank continues from the
result. Rules:

  sum    sum_r Delta_r
  mean   the mean of the Delta_r
  curv   sum_r Delta_r * (1 - exp(-N H)) / (N (1 - exp(-H))), H = mean over ranks of the
         row's curvature in the round, sum over its hits of alpha * s'(dot) * |other row|^2
         (with batch-start rows). On a quadratic a row's remaining distance shrinks by
         exp(-H) over hits of total curvature H, so N ranks that each moved a fraction
         1 - exp(-H) of the way to one optimum moved N times what one process reading all
         of their words would (1 - exp(-N H)): the factor is 1 for a row the round barely
         bent (a rare word: sum) and tends to 1/N for one it saturated (a hot output row:
         mean), from the row's own measured curvature instead of an occurrence count.

Usage: dp_sim.py CORPUS OUT.txt --ranks N --rule sum|mean|curv [--round-words R]
       [--batch B] [--epochs E] [--seed S]
Writes word2vec text vectors (input rows) and prints one JSON line."""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import time

import numpy as np
import scipy.sparse as sp

from staleness_sim import epoch_pairs, read_corpus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--rule", choices=["sum", "mean", "curv"], required=True)
    ap.add_argument("--round-words", type=int, default=10000,
                    help="trained words a rank between two rounds")
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--negative", type=int, default=5)
    ap.add_argument("--sample", type=float, default=1e-4)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.025)
    a = ap.parse_args()

    t0 = time.time()
    vocab, cnt, ids, sent, raw_words = read_corpus(a.corpus, a.min_count, 0)
    V, d, K, N = len(vocab), a.dim, a.negative, a.ranks
    T = cnt.sum()
    st = a.sample * T
    keep_p = np.minimum(1.0, (np.sqrt(cnt / st) + 1.0) * st / cnt) if a.sample > 0 else np.ones(V)
    uni = cnt.astype(np.float64) ** 0.75
    cdf = np.cumsum(uni / uni.sum())
    cdf[-1] = 1.0
    rng = np.random.default_rng(a.seed)
    base_in = ((rng.random((V, d), dtype=np.float32) - 0.5) / d).astype(np.float32)
    base_out = np.zeros((V, d), dtype=np.float32)
    labels = np.zeros(K + 1, dtype=np.float32)
    labels[0] = 1.0

    # Each rank's share: whole lines, about 1/N of the words each.
    cut = [0] + [int(np.searchsorted(sent, sent[ids.size * r // N])) for r in range(1, N)] + [ids.size]
    shares = [(ids[cut[r]:cut[r + 1]], sent[cut[r]:cut[r + 1]]) for r in range(N)]
    w_in = [base_in.copy() for _ in range(N)]
    w_out = [base_out.copy() for _ in range(N)]
    rounds = 0
    for ep in range(a.epochs):
        plans = []
        for r, (rid, rsent) in enumerate(shares):
            kept, cpos, centre, ctx = epoch_pairs(rng, rid, rsent, keep_p, a.window)
            P = centre.size
            neg = np.searchsorted(cdf, rng.random((P, K))).astype(np.int32)
            targets = np.concatenate([centre[:, None], neg], axis=1)
            valid = np.ones((P, K + 1), dtype=bool)
            valid[:, 1:] = neg != centre[:, None]
            progress = (ep * rid.size + kept[cpos]) / (float(rid.size) * a.epochs)
            alpha = np.maximum(a.alpha * 1e-4, a.alpha * (1.0 - progress)).astype(np.float32)
            plans.append((kept.size, cpos, ctx, targets, valid, alpha))
        most = max(p[0] for p in plans)
        for start in range(0, most, a.round_words):
            h_in = [np.zeros(V) for _ in range(N)]
            h_out = [np.zeros(V) for _ in range(N)]
            for r, (nk, cpos, ctx, targets, valid, alpha) in enumerate(plans):
                stop = min(nk, start + a.round_words)
                for blo in range(start, stop, a.batch):
                    lo, hi = np.searchsorted(cpos, [blo, min(stop, blo + a.batch)])
                    if lo == hi:
                        continue
                    xin = w_in[r][ctx[lo:hi]]
                    xout = w_out[r][targets[lo:hi]]
                    f = np.einsum("nd,nkd->nk", xin, xout)
                    sg = 1.0 / (1.0 + np.exp(-np.clip(f, -7.0, 7.0)))
                    sg[f > 6] = 1.0
                    sg[f < -6] = 0.0
                    g = (labels[None, :] - sg) * alpha[lo:hi, None]
                    g[~valid[lo:hi]] = 0.0
                    ii = np.repeat(ctx[lo:hi], K + 1)
                    jj = targets[lo:hi].ravel()
                    if a.rule == "curv":
                        c = (sg * (1.0 - sg) * alpha[lo:hi, None])
                        c[~valid[lo:hi]] = 0.0
                        c = c.ravel()
                        h_in[r] += np.bincount(ii, weights=c * np.einsum("nkd,nkd->nk", xout, xout).ravel(),
                                               minlength=V)
                        h_out[r] += np.bincount(jj, weights=c * np.repeat(np.einsum("nd,nd->n", xin, xin), K + 1),
                                                minlength=V)
                    ui, inv_i = np.unique(ii, return_inverse=True)
                    uo, inv_o = np.unique(jj, return_inverse=True)
                    G = sp.csr_matrix((g.ravel().astype(np.float32), (inv_i, inv_o)),
                                      shape=(ui.size, uo.size))
                    d_in = G @ w_out[r][uo]
                    d_out = G.T @ w_in[r][ui]
                    w_in[r][ui] += d_in
                    w_out[r][uo] += d_out
            rounds += 1
            for base, ws, hs in ((base_in, w_in, h_in), (base_out, w_out, h_out)):
                delta = sum(w - base for w in ws)
                if a.rule == "mean":
                    delta /= N
                elif a.rule == "curv" and N > 1:
                    H = np.maximum(sum(hs) / N, 1e-12)
                    factor = -np.expm1(-N * H) / (N * -np.expm1(-H))
                    delta *= factor[:, None].astype(np.float32)
                base += delta
                for w in ws:
                    w[:] = base
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(f"{V} {d}\n")
        for w, row in zip(vocab, base_in):
            f.write(w + " " + " ".join(f"{v:.6f}" for v in row) + "\n")
    print(json.dumps({"ranks": N, "rule": a.rule, "round_words": a.round_words, "batch": a.batch,
                      "epochs": a.epochs, "seed": a.seed, "rounds": rounds,
                      "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
