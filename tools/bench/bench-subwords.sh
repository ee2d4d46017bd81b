#!/usr/bin/env bash
# Subword vectors: posvec train --subwords against fastText 0.9.2 (skipgram) and gensim's
# FastText on Brown x4 and x16 (speed, peak memory), Brown quality over 3 seeds (analogy
# halves, WordSim-353, SimLex-999, pairs with words outside the vocabulary) and loading
# a 1M-bucket dim-300 fastText model.
#   bash tools/bench/bench-subwords.sh [--parts speed,quality,load] [--scale 4,16]
#        [--dims 100,300] [--trainers posvec,posvec-bf16,fasttext,gensim] [--repeat N]
#        [--gensim-cap S] [--gensim-max-scale N] [--json FILE] ...
# A short run: --parts speed --scale 4 --dims 100. Without `posvec train --subwords`
# (build/posvec from before subword training) the peers run alone. Needs fasttext,
# /usr/bin/python3 with gensim and SciPy, /usr/bin/time; ../shared/data for quality.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_subwords.py" "$@"
