#!/usr/bin/env bash
# Speed benchmark: end-to-end throughput on Brown x16 as three columns (gensim,
# posvec built from an earlier commit, this posvec), GFLOP/s of the training epoch
# against the machine's measured FMA peak, thread scaling, and quality on Brown
# with 3 seeds, all measured in the same run.
#   bash tools/bench/bench-fast.sh [--parts throughput,efficiency,scaling,quality]
#        [--dims 100,512] [--repeats 3] [--seeds 1,2,3] [--threads 2]
#        [--trainers gensim,previous,posvec] [--previous-commit 9dd9276] [--weights fp32]
#        [--efficiency-kernels batched,combined]
# Needs build/posvec, build/train_kernel and build/fma_peak (cmake --build build),
# git and cmake (the previous commit is built once into tools/bench/out),
# /usr/bin/python3 with gensim, fasttext and /usr/bin/time. The full run takes
# about an hour on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_fast.py" "$@"
