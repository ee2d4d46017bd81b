#!/usr/bin/env bash
# Batched skip-gram kernel benchmark: batched vs classic kernel vs gensim vs fastText
# (throughput on Brown x16, thread scaling, GFLOP/s against the peak, quality on
# Brown with 3 seeds), all measured in the same run.
#   bash tools/bench/bench-fast.sh [--parts throughput,scaling,quality] [--dims 100,512]
#        [--seeds 1,2,3] [--threads 2] [--trainers batched,classic,gensim,fasttext]
# Needs build/train_kernel (cmake --build build), /usr/bin/python3 with gensim,
# fasttext and /usr/bin/time. The full run takes about half an hour on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_fast.py" "$@"
