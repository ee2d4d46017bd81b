#!/usr/bin/env bash
# Python package benchmarks: Word2Vec training throughput against `posvec train` on
# Brown (same settings), and loading a word2vec binary into posvec.KeyedVectors
# against gensim's load_word2vec_format.
#   bash tools/bench/bench-python.sh [--quick] [train|load] [--threads N] [--repeats R]
# Needs build/posvec and build/python (cmake --build build), tools/scripts/fetch-brown.sh's
# data (fetched when missing), /usr/bin/python3 with NumPy and gensim.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_python.py" "$@"
