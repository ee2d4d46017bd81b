#!/usr/bin/python3
"""Accuracy and speed of common position-encoding recipes against posvec.

Each recipe is the interleaved sinusoidal encoding (Vaswani et al.) written the
way popular code writes it; float32 PyTorch arithmetic is emulated in NumPy
(PyTorch's default dtype: every intermediate tensor is float32). Errors are the
max |value - reference| over 300 rows from each position, with the reference in
long double (x87 80-bit, numpy.longdouble). posvec's rows come from
`posvec pe ... --format npy`.

usage: pe_float32_recipes.py POSVEC_BINARY [--len 65536] [--dim 512] [--runs 5]
                             [--posvec-ms MS]   (posvec's time, for the ratios)
"""
import argparse
import math
import os
import subprocess
import tempfile
import time

import numpy as np

BASE = 10000.0


def torch_float32(pos, d):
    # position = arange(max_len).unsqueeze(1); div_term = exp(arange(0, d, 2) * (-log(base) / d));
    # pe[:, 0::2] = sin(position * div_term): all float32 (the scalar is cast to float32 too).
    position = pos.astype(np.float32)[:, None]
    div_term = np.exp(np.arange(0, d, 2).astype(np.float32) * np.float32(-math.log(BASE) / d))
    angle = position * div_term
    out = np.empty((len(pos), d), dtype=np.float32)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out


def numpy_float32_pow(pos, d):
    # pos / base ** (2k / d) with float32 arrays throughout.
    i = np.arange(0, d, 2, dtype=np.float32)
    angle = pos.astype(np.float32)[:, None] / np.power(np.float32(BASE), i / np.float32(d))
    out = np.empty((len(pos), d), dtype=np.float32)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out


def numpy_float64_cast(pos, d):
    # The same formula in float64, cast to float32 at the end (TensorFlow tutorial style).
    i = np.arange(0, d, 2, dtype=np.float64)
    angle = pos.astype(np.float64)[:, None] / np.power(BASE, i / d)
    out = np.empty((len(pos), d), dtype=np.float64)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out.astype(np.float32)


RECIPES = [
    ("pytorch float32 (exp/log div_term)", torch_float32),
    ("numpy float32 (pos / base**(2k/d))", numpy_float32_pow),
    ("numpy float64, cast to float32", numpy_float64_cast),
]


def reference(pos, d):
    i = np.arange(0, d, 2).astype(np.longdouble)
    angle = pos.astype(np.longdouble)[:, None] / np.power(np.longdouble(BASE), i / np.longdouble(d))
    out = np.empty((len(pos), d), dtype=np.longdouble)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out


def max_error(values, ref):
    # (over all rows, on the first row alone)
    err = np.abs(values.astype(np.longdouble) - ref)
    return float(np.max(err)), float(np.max(err[0]))


def posvec_rows(binary, start, count, d, tmp):
    path = os.path.join(tmp, "pe.npy")
    subprocess.run([binary, "--quiet", "pe", "--dim", str(d), "--len", str(count), "--start",
                    str(start), "--precision", "float", "-o", path], check=True)
    return np.load(path)


def best_time(fn, runs):
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("posvec")
    ap.add_argument("--len", type=int, default=65536)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--posvec-ms", type=float, default=None)
    a = ap.parse_args()
    d = a.dim

    positions = [2048, 65536, 1000000, 10000000]
    print(f"max |error| against a long-double reference, d={d}, 300 rows from each position")
    print(f"  {'recipe':38s}" + "".join(f"{p:>12d}" for p in positions))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        refs = {p: reference(np.arange(p, p + 300), d) for p in positions}
        for name, fn in RECIPES:
            rows[name] = [max_error(fn(np.arange(p, p + 300), d), refs[p]) for p in positions]
        rows["posvec (float32 output)"] = [
            max_error(posvec_rows(a.posvec, p, 300, d, tmp), refs[p]) for p in positions]
    for name, errs in rows.items():
        print(f"  {name:38s}" + "".join(f"{e[0]:12.2e}" for e in errs))
    print("  the same, row p alone")
    for name, errs in rows.items():
        print(f"  {name:38s}" + "".join(f"{e[1]:12.2e}" for e in errs))

    print(f"time to build the {a.len} x {d} float32 matrix, best of {a.runs}, one thread")
    pos = np.arange(a.len)
    for name, fn in RECIPES:
        t = best_time(lambda: fn(pos, d), a.runs)
        ratio = f"   {t * 1e3 / a.posvec_ms:6.1f}x posvec" if a.posvec_ms else ""
        print(f"  {name:38s} {t * 1e3:9.1f} ms{ratio}")
    if a.posvec_ms:
        print(f"  {'posvec matrixFloat (positional_bench)':38s} {a.posvec_ms:9.1f} ms")


if __name__ == "__main__":
    main()
