#!/usr/bin/env bash
# Time to quality of distributed training on Brown x16 (every copy shuffled): analogy,
# WordSim-353 and SimLex-999 at 1 (one process, one thread), 2, 4 and 8 ranks (one thread a rank)
# after 1 to 4 epochs, seeds 1..3; MB sent per rank, wall time, and S_N, the words one process
# needs to reach its own 1-epoch band over the words each of N ranks needs.
#   bash tools/bench/bench-quality.sh [--quick] [--ranks 1,2,4,8] [--epochs 1,2,3,4]
#        [--seeds 1,2,3] [--posvec PATH] [--data DIR] [--extra "TRAIN FLAGS"] [--label NAME]
# --extra: train flags for the runs at 2 ranks or more (a design variant). Results are cached
# per run in tools/bench/out/. Needs build/posvec built with POSVEC_MPI (or --posvec), mpirun,
# /usr/bin/python3 with gensim, ../shared/data or --data DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_quality.py" "$@"
