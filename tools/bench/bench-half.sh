#!/usr/bin/env bash
# 16-bit weights against float32 in one run: Brown x16, 1 epoch, end to end (wall time,
# peak RSS, ratios against the float32 runs of the same run; medians of alternating
# runs), and quality on Brown (5 epochs, 5 seeds, dims 100 and 512: fp32, bf16, fp16
# and gensim's Word2Vec as the spread).
#   bash tools/bench/bench-half.sh [--parts throughput,quality] [--dims 100,512]
#        [--repeats 3] [--threads 2] [--weights fp32,bf16,fp16] [--seeds 1,2,3,4,5]
#        [--quality-trainers fp32,bf16,fp16,gensim] [--save FILE] [--load FILE]
# A posvec without --weights measures float32 (and gensim) only and says so.
# Needs build/posvec (cmake --build build --target posvec_cli), /usr/bin/time and
# /usr/bin/python3 with gensim. Throughput takes about 5 minutes, quality about 15,
# on 2 idle cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_half.py" "$@"
