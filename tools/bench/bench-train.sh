#!/usr/bin/env bash
# Training benchmark: posvec train vs gensim Word2Vec and fastText skipgram on the
# Brown corpus (and a 16x concatenation for throughput), same hyperparameters.
#   bash tools/bench/bench-train.sh [--quick] [--data DIR] [--threads N] [--trainers posvec,gensim,fasttext]
# --quick: Brown only, dim 100, one seed (a few minutes). Needs build/posvec
# (cmake --build build), /usr/bin/python3 with gensim, fasttext, /usr/bin/time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_train.py" "$@"
