#!/usr/bin/env bash
# The project's two entry points (see README):
#   tools/dev.sh study [ARGS]   set up, build, run the black/brown study on the shipped corpus
#   tools/dev.sh test           set up, build, run the whole test suite
#   tools/dev.sh mutate [ARGS]  mutation testing (tools/mutate.sh, tools/mutants.txt)
# Also: tools/dev.sh build (set up and build only).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="${POSVEC_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"

do_build() {
  bash tools/setup.sh "$@"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$jobs"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  study)
    do_build
    "$build/posvec" study "$@"
    ;;
  test)
    do_build --test
    ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
    ;;
  build)
    do_build "$@"
    ;;
  mutate)
    bash tools/setup.sh --test
    exec bash tools/mutate.sh "$@"
    ;;
  *)
    echo "usage: tools/dev.sh study|test|build|mutate" >&2
    exit 2
    ;;
esac
