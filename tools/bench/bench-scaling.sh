#!/usr/bin/env bash
# Cost as the corpus grows: words/s and peak memory of `posvec train` on a Zipf
# corpus generated on the fly and piped through stdin (never stored), with an SVG
# plot (tools/bench/scaling.svg).
#   bash tools/bench/bench-scaling.sh [--sizes 10e6,100e6[,1e9]] [--vocab 5e6] [--dim 100]
# Needs build/posvec and build/zipf_corpus (cmake --build build) and /usr/bin/time.
# The default run (10M and 100M words) takes a few minutes on 2 idle cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_scaling.py" "$@"
