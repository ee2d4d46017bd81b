#!/usr/bin/python3
"""Skip-gram negative-sampling trainer in NumPy whose updates are applied in batches of
B trained words: every dot of a batch is computed from the weights as they were at the
batch's start, then all of the batch's updates are applied. This is what a
column-partitioned model-parallel mode sees when it amortises one all-reduce of dots
over B words; B = 1 is word2vec's own sequential rule (up to the order inside a word).

word2vec's rules: vocabulary min-count, subsampling keep probability
(sqrt(f/(s*T)) + 1) * (s*T)/f (capped at 1), window with a uniform random shrink
(b = rand % window, effective window window - b), negatives from unigram^0.75 (a
negative equal to the positive word is skipped), sigmoid saturating at |dot| > 6,
learning rate decaying linearly from alpha to alpha*1e-4 over all epochs by raw words
read, input rows uniform in [-0.5/d, 0.5/d], output rows zero. As in word2vec.c the
input row of a pair is the context word's and the output rows are the centre word's
(label 1) and the negatives' (label 0). Windows do not cross lines.

Per batch the updates are written as a sparse matrix G (input word x output word, sum
of g = alpha*(label - sigmoid(dot)) over the batch's pairs) so that
    W_in[u]  += G   @ W_out[v]      (batch-start rows)
    W_out[v] += G^T @ W_in[u]       (batch-start rows)
which is exactly the sum of the per-pair updates (the same as np.add.at of
g*out_row and g*in_row) but much faster.

Usage: staleness_sim.py CORPUS OUT.txt --batch B [--epochs E] [--seed S]
       [--dim 100] [--window 5] [--negative 5] [--sample 1e-4] [--min-count 5]
       [--alpha 0.025] [--max-words N]
Writes word2vec text vectors (input rows, words by descending count) and prints one
JSON line with the run's figures."""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse
import collections
import json
import time

import numpy as np
import scipy.sparse as sp


def read_corpus(path, min_count, max_words):
    lines = []
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            toks = line.split()
            if max_words and n + len(toks) > max_words:
                toks = toks[:max_words - n]
            if toks:
                lines.append(toks)
                n += len(toks)
            if max_words and n >= max_words:
                break
    counts = collections.Counter(t for toks in lines for t in toks)
    vocab = [w for w, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])) if c >= min_count]
    index = {w: i for i, w in enumerate(vocab)}
    cnt = np.array([counts[w] for w in vocab], dtype=np.int64)
    ids, sent = [], []
    for s, toks in enumerate(lines):
        for t in toks:
            i = index.get(t)
            if i is not None:
                ids.append(i)
                sent.append(s)
    return vocab, cnt, np.array(ids, dtype=np.int32), np.array(sent, dtype=np.int32), n


def epoch_pairs(rng, ids, sent, keep_p, window):
    """Subsamples one epoch and returns, in training order, the kept positions (index
    into ids) and the pairs (kept-centre ordinal, centre word, context word)."""
    kept = np.nonzero(rng.random(ids.size) < keep_p[ids])[0]
    w, s = ids[kept], sent[kept]
    eff = window - rng.integers(0, window, size=kept.size)
    cs, xs = [], []
    for o in range(1, window + 1):
        for sign in (1, -1):
            if sign > 0:
                c = np.arange(0, kept.size - o)
                x = c + o
            else:
                c = np.arange(o, kept.size)
                x = c - o
            ok = (s[c] == s[x]) & (eff[c] >= o)
            cs.append(c[ok])
            xs.append(x[ok])
    c = np.concatenate(cs)
    x = np.concatenate(xs)
    order = np.argsort(c, kind="stable")
    c, x = c[order], x[order]
    return kept, c, w[c], w[x]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--negative", type=int, default=5)
    ap.add_argument("--sample", type=float, default=1e-4)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.025)
    ap.add_argument("--max-words", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=20000, help="pairs per dot chunk")
    ap.add_argument("--hit-cap", type=float, default=0,
                    help="a row scored more than this many times in a batch takes its summed "
                         "change times hit-cap / hits (0: no cap)")
    ap.add_argument("--damp", action="store_true",
                    help="divide each row's summed change by 1 + sum over its hits of "
                         "alpha*s'(dot)*|other row|^2 (the curvature the batch's own dots "
                         "measure: a step that sequential updates would shrink is shrunk)")
    a = ap.parse_args()

    t0 = time.time()
    vocab, cnt, ids, sent, raw_words = read_corpus(a.corpus, a.min_count, a.max_words)
    V, d, K = len(vocab), a.dim, a.negative
    T = float(cnt.sum())
    st = a.sample * T
    keep_p = np.minimum(1.0, (np.sqrt(cnt / st) + 1.0) * st / cnt) if a.sample > 0 else np.ones(V)
    uni = cnt.astype(np.float64) ** 0.75
    cdf = np.cumsum(uni / uni.sum())
    cdf[-1] = 1.0

    rng = np.random.default_rng(a.seed)
    w_in = ((rng.random((V, d), dtype=np.float32) - 0.5) / d).astype(np.float32)
    w_out = np.zeros((V, d), dtype=np.float32)
    labels = np.zeros(K + 1, dtype=np.float32)
    labels[0] = 1.0
    total = float(ids.size) * a.epochs
    min_alpha = a.alpha * 1e-4
    trained = 0
    pairs_total = 0
    batches = 0

    for ep in range(a.epochs):
        kept, cpos, centre, ctx = epoch_pairs(rng, ids, sent, keep_p, a.window)
        trained += kept.size
        P = centre.size
        pairs_total += P
        neg = np.searchsorted(cdf, rng.random((P, K))).astype(np.int32)
        targets = np.concatenate([centre[:, None], neg], axis=1)       # P x (K+1)
        valid = np.ones((P, K + 1), dtype=bool)
        valid[:, 1:] = neg != centre[:, None]
        # learning rate by raw words read before the centre word
        progress = (ep * ids.size + kept[cpos]) / total
        alpha = np.maximum(min_alpha, a.alpha * (1.0 - progress)).astype(np.float32)
        # batch boundaries by kept-centre ordinal
        nb = (kept.size + a.batch - 1) // a.batch
        bounds = np.searchsorted(cpos, np.arange(nb + 1) * a.batch)
        for b in range(nb):
            lo, hi = bounds[b], bounds[b + 1]
            if lo == hi:
                continue
            batches += 1
            gs, hs = [], []
            for clo in range(lo, hi, a.chunk):
                chi = min(hi, clo + a.chunk)
                xin = w_in[ctx[clo:chi]]                               # n x d
                xout = w_out[targets[clo:chi]]                         # n x (K+1) x d
                f = np.einsum("nd,nkd->nk", xin, xout)
                sg = 1.0 / (1.0 + np.exp(-np.clip(f, -7.0, 7.0)))
                sg[f > 6] = 1.0
                sg[f < -6] = 0.0
                g = (labels[None, :] - sg) * alpha[clo:chi, None]
                g[~valid[clo:chi]] = 0.0
                gs.append(g)
                if a.damp:
                    h = sg * (1.0 - sg) * alpha[clo:chi, None]
                    h[~valid[clo:chi]] = 0.0
                    hs.append(h)
            g = np.concatenate(gs).ravel()
            ii = np.repeat(ctx[lo:hi], K + 1)
            jj = targets[lo:hi].ravel()
            ui, inv_i = np.unique(ii, return_inverse=True)
            uo, inv_o = np.unique(jj, return_inverse=True)
            G = sp.csr_matrix((g.astype(np.float32), (inv_i, inv_o)), shape=(ui.size, uo.size))
            d_in = G @ w_out[uo]
            d_out = G.T @ w_in[ui]
            if a.hit_cap > 0:
                # Each row's change is the sum of its hits' gradients, all from one stale
                # row: cap the number of hits it counts for.
                hits_in = np.bincount(inv_i, minlength=ui.size) / (K + 1)  # a pair scores K + 1
                d_in *= np.minimum(1.0, a.hit_cap / hits_in)[:, None]
                d_out *= np.minimum(1.0, a.hit_cap / np.bincount(inv_o, minlength=uo.size))[:, None]
            if a.damp:
                h = np.concatenate(hs).ravel()
                n_out = np.einsum("nd,nd->n", w_out[uo], w_out[uo])
                n_in = np.einsum("nd,nd->n", w_in[ui], w_in[ui])
                d_in /= (1.0 + np.bincount(inv_i, weights=h * n_out[inv_o], minlength=ui.size))[:, None]
                d_out /= (1.0 + np.bincount(inv_o, weights=h * n_in[inv_i], minlength=uo.size))[:, None]
            w_in[ui] += d_in
            w_out[uo] += d_out

    secs = time.time() - t0
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(f"{V} {d}\n")
        for w, row in zip(vocab, w_in):
            f.write(w + " " + " ".join(f"{v:.6f}" for v in row) + "\n")
    print(json.dumps({"batch": a.batch, "hit_cap": a.hit_cap, "damp": a.damp, "epochs": a.epochs, "seed": a.seed,
                      "vocab": V,
                      "raw_words": raw_words, "trained_words": int(trained),
                      "pairs": int(pairs_total), "batches": batches,
                      "train_seconds": round(secs, 1)}))


if __name__ == "__main__":
    main()
