#!/usr/bin/env bash
# Distributed training benchmark, one thread a rank, side by side with a previous build:
#   traffic at 2, 4 and 8 ranks on Brown x4 (1 epoch, dim 100): MB per rank on the wire (Open MPI
#   over TCP on the loopback of a private network namespace, shared memory off) and as posvec
#   reports it, rounds, waiting share, wall time;
#   quality at 2, 4 and 8 ranks against one process (Brown, 5 epochs, seeds 1..3);
#   a projection of the communication share to 8, 32 and 128 machines (tools/bench/mpi_model.py).
#   bash tools/bench/bench-mpi.sh [--posvec PATH] [--baseline PATH_TO_OLD_POSVEC] [--reuse-cache]
#                                 [--ranks 2,4,8] [--copies N] [--seeds N] [--epochs N]
#                                 [--no-quality] [--mpirun-flags=FLAGS]
# Needs build/posvec built with POSVEC_MPI, mpirun, unshare and ip (root, for the namespace),
# /usr/bin/python3 with numpy and gensim (quality), ../shared/data or --data DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/python3 "$here/bench_mpi.py" "$@"
