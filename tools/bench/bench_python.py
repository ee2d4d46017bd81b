"""Benchmarks of the Python package (see bench-python.sh for usage).

train: the same training (Brown, pre-tokenized, skip-gram NS, dim 100, window 5,
  min-count 5, 5 epochs) through `posvec train` and through posvec.Word2Vec, from
  the file and from a Python list of sentences; each run writes the vectors, and
  runs alternate so load on the machine hits both alike. Reported: median seconds
  and corpus words per second (words x epochs / seconds), and Python/CLI ratios.
load: a random V x D word2vec binary file (100k x 512 by default) read by
  posvec.KeyedVectors.load_word2vec_format and by gensim's, page cache warm;
  median seconds and the ratio.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("POSVEC_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))

import numpy as np  # noqa: E402

import posvec  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cpu_timed(fn):
    """(wall, CPU) seconds of an in-process call: on a busy machine the CPU time
    of a single-threaded loader says more than the wall clock."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_train(args, out_dir):
    data = os.path.join(ROOT, "tools", "bench", "data")
    subprocess.run(["bash", os.path.join(ROOT, "tools", "scripts", "fetch-brown.sh"), data], check=True)
    corpus = os.path.join(data, "brown.txt")
    cli = os.path.join(BUILD, "posvec")
    epochs = 1 if args.quick else 5
    with open(corpus, encoding="utf-8") as f:
        sentences = [line.split() for line in f]
    words = sum(map(len, sentences)) * epochs
    opts = dict(vector_size=100, window=5, min_count=5, epochs=epochs, workers=args.threads,
                seed=1, progress=False)
    out = os.path.join(out_dir, "v.bin")

    def run_cli():
        subprocess.run([cli, "--quiet", "train", corpus, "--pretokenized", "-o", out, "--dim", "100",
                        "--window", "5", "--min-count", "5", "--epochs", str(epochs),
                        "--threads", str(args.threads), "--seed", "1"],
                       check=True, stdout=subprocess.DEVNULL)

    def run_file():
        posvec.Word2Vec(corpus_file=corpus, pretokenized=True, **opts).wv.save_word2vec_format(out)

    def run_list():
        posvec.Word2Vec(sentences, **opts).wv.save_word2vec_format(out)

    runs = {"cli": [], "python-file": [], "python-list": []}
    for _ in range(args.repeats):
        runs["cli"].append(timed(run_cli))
        runs["python-file"].append(timed(run_file))
        runs["python-list"].append(timed(run_list))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"train: Brown {words // epochs} words x {epochs} epochs, dim 100, {args.threads} threads, "
          f"median of {args.repeats}")
    for k, s in med.items():
        print(f"  {k:12s} {s:7.2f} s  {words / s / 1e6:6.2f} M words/s  "
              f"throughput vs cli {med['cli'] / s:.3f}")


def bench_load(args, out_dir):
    import gensim.models

    v, d = (10000, 128) if args.quick else (args.words, args.dim)
    path = os.path.join(out_dir, f"random-{v}x{d}.bin")
    rng = np.random.default_rng(1)
    with open(path, "wb") as f:
        f.write(f"{v} {d}\n".encode())
        for i in range(v):
            f.write(f"w{i} ".encode() + rng.standard_normal(d).astype("<f4").tobytes() + b"\n")
    with open(path, "rb") as f:  # warm the page cache
        while f.read(1 << 24):
            pass
    runs = {"posvec": [], "gensim": []}
    for _ in range(args.repeats):
        runs["posvec"].append(cpu_timed(lambda: posvec.KeyedVectors.load_word2vec_format(path, binary=True)))
        runs["gensim"].append(cpu_timed(lambda: gensim.models.KeyedVectors.load_word2vec_format(path, binary=True)))
    a = posvec.KeyedVectors.load_word2vec_format(path)
    b = gensim.models.KeyedVectors.load_word2vec_format(path, binary=True)
    assert a.index_to_key == b.index_to_key and np.array_equal(a.vectors, b.vectors)
    wall = {k: statistics.median(w for w, _ in r) for k, r in runs.items()}
    cpu = {k: statistics.median(c for _, c in r) for k, r in runs.items()}
    print(f"load: {v} x {d} word2vec binary ({os.path.getsize(path) / 1e6:.0f} MB), median of {args.repeats}")
    print(f"  wall: posvec {wall['posvec']:.3f} s, gensim {wall['gensim']:.3f} s: "
          f"posvec {wall['gensim'] / wall['posvec']:.1f}x faster")
    print(f"  CPU:  posvec {cpu['posvec']:.3f} s, gensim {cpu['gensim']:.3f} s: "
          f"posvec {cpu['gensim'] / cpu['posvec']:.1f}x faster")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="*", help="train and/or load (default: both)")
    p.add_argument("--quick", action="store_true", help="1 epoch, a 10k x 128 file: checks the script")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--words", type=int, default=100000)
    p.add_argument("--dim", type=int, default=512)
    args = p.parse_args()
    if set(args.what) - {"train", "load"}:
        p.error("benchmarks are 'train' and 'load'")
    with tempfile.TemporaryDirectory() as out_dir:
        for what in args.what or ["train", "load"]:
            {"train": bench_train, "load": bench_load}[what](args, out_dir)


if __name__ == "__main__":
    main()
