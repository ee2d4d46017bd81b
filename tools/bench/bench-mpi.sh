#!/usr/bin/env bash
# Distributed training benchmark: 1 process x 2 threads against 2 MPI processes x 1 thread
# on Brown x16 (1 epoch, throughput) and Brown (5 epochs, quality), the bytes reduced per
# synchronisation and per epoch, and a projection to 8, 32 and 128 machines.
#   bash tools/bench/bench-mpi.sh [--mpirun-flags=FLAGS] [--repeats N] [--seeds N]
#                                 [--sync-words N] [--sync-rows N] [--sync-warmup N] [--dim N]
# Needs build/posvec built with POSVEC_MPI, mpirun, /usr/bin/python3 with gensim (quality).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_mpi.py" "$@"
