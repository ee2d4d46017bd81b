#!/usr/bin/env bash
# Positional-stage benchmark: posvec's PositionalEncoder (tools/bench/positional_bench,
# one thread) against the common NumPy / emulated-PyTorch recipes, timed in the
# same run, plus every recipe's max error against a long-double reference at
# positions 2,048, 65,536, 10^6 and 10^7.
#
# usage: tools/bench/bench-positional.sh [BUILD_DIR=build] [LEN=65536] [DIM=512]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
len=${2:-65536}
dim=${3:-512}
for f in "$build/positional_bench" "$build/posvec"; do
  [[ -x $f ]] || { echo "bench-positional: $f is missing; build first (cmake --build $build)" >&2; exit 1; }
done
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

echo "== posvec (C++, positional_bench $len $dim)"
out=$("$build/positional_bench" "$len" "$dim" 7)
echo "$out"
ms=$(awk '/matrixFloat \(allocates\)/ {print $(NF-1)}' <<<"$out")

echo
echo "== peers (NumPy; PyTorch float32 arithmetic emulated), ratios against posvec matrixFloat = $ms ms"
/usr/bin/python3 tools/bench/pe_float32_recipes.py "$build/posvec" --len "$len" --dim "$dim" --posvec-ms "$ms"
