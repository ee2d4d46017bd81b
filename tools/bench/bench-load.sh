#!/usr/bin/env bash
# Loading a word2vec binary (100k x 512 random vectors by default) in fresh
# processes, posvec against gensim, alternating: min, median and max of N runs.
#   bash tools/bench/bench-load.sh [--runs N] [--words V] [--dim D] [--file PATH] [--build DIR]
# Needs build/python (cmake --build build --target posvec_python), /usr/bin/python3 with
# NumPy and gensim.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_load.py" "$@"
