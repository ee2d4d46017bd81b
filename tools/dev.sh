#!/usr/bin/env bash
# The project's two entry points (see README.md and docs/development.md):
#   tools/dev.sh study [ARGS]   set up, build, run the black/brown study on the shipped corpus
#   tools/dev.sh test           set up, build, check that each file of a unity unit
#                               compiles alone, run the whole test suite, then the
#                               sanitizer builds: ASan+UBSan unit tests and fuzz
#                               harnesses (seeds + a short run each), TSan training
#   tools/dev.sh mutate [ARGS]  mutation testing (tools/scripts/mutate.sh, tools/scripts/mutants.txt)
#   tools/dev.sh docs           the C++ API reference (Doxygen, include/posvec) into
#                               BUILD/docs/html; fails on any Doxygen warning
# Also: tools/dev.sh build (set up and build everything, then print where the
# posvec binary is; `study` builds only the posvec binary), tools/dev.sh sanitize (only the
# sanitizer builds and runs of the test command), tools/dev.sh fuzz [SECONDS]
# (build the fuzz harnesses and fuzz each for SECONDS, default 120).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="${POSVEC_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
# Sanitizer builds: -O1 keeps them quick to build and fast enough to run;
# line tables are enough for the reports' stacks.
san_flags=(-DCMAKE_BUILD_TYPE=Debug -DPOSVEC_BUILD_BENCH=OFF -DPOSVEC_UNITY=ON)
# Ninja, when installed (tools/scripts/setup.sh --test), for a new build dir: unlike make it
# compiles a target's files while the library it links is still compiling, so both
# cores stay busy through the long unity units. A build dir keeps its generator.
generator() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    echo "-GNinja"
  fi
}
fuzz_seconds="${POSVEC_FUZZ_SECONDS:-3}"  # per harness, in the test command

# CPU seconds (user + system) of this script's finished child processes so far
# (/proc: cutime and cstime, in clock ticks).
children_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($16 + $17) / hz }' "/proc/$$/stat"
}

# Runs a stage of the test command and prints its wall and CPU time (the test
# command is to stay under 15 minutes on the project's 2-core CI machine).
stage() {
  local label="$1" start=$SECONDS cpu
  shift
  cpu="$(children_cpu)"
  "$@"
  echo "dev.sh: $label: $((SECONDS - start)) s wall, $(($(children_cpu) - cpu)) s CPU" >&2
}

# do_build [TARGET...] [-- SETUP-OPTIONS]: set up, configure, and build the targets
# given (default: everything).
do_build() {
  local targets=() setup=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; setup=("$@"); break ;;
      *) targets+=(--target "$1"); shift ;;
    esac
  done
  stage "setup" bash tools/scripts/setup.sh ${setup[@]+"${setup[@]}"}
  cmake -S . -B "$build" $(generator "$build") -DCMAKE_BUILD_TYPE=Release -DPOSVEC_UNITY=ON >/dev/null
  stage "Release build" cmake --build "$build" -j "$jobs" ${targets[@]+"${targets[@]}"}
}

# clang with libFuzzer and the sanitizer runtimes (Debian: clang, libclang-rt-14-dev).
have_clang() {
  command -v clang++ >/dev/null 2>&1 || return 1
  local tmp
  tmp="$(mktemp -d)"
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    >"$tmp/f.cpp"
  local ok=0
  clang++ -fsanitize=fuzzer,address,undefined "$tmp/f.cpp" -o "$tmp/f" >/dev/null 2>&1 || ok=1
  rm -rf "$tmp"
  return $ok
}

# gcc's -fsanitize=address,undefined, when clang is missing (no fuzzers then).
have_gcc_asan() {
  echo 'int main() { return 0; }' | g++ -x c++ -fsanitize=address,undefined - -o /dev/null \
    >/dev/null 2>&1
}

# configure_asan [DIR COVERAGE]: the ASan+UBSan build in DIR (default $build-asan), its
# fuzz harnesses' coverage feedback in every target ON or OFF (default OFF: the test
# command's harnesses fuzz for seconds, and coverage slows the unit tests by a quarter).
configure_asan() {
  local dir="${1:-$build-asan}" coverage="${2:-OFF}"
  if have_clang; then
    cmake -S . -B "$dir" $(generator "$dir") "${san_flags[@]}" -DCMAKE_CXX_COMPILER=clang++ \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DPOSVEC_SANITIZE=address,undefined \
      -DPOSVEC_FUZZ=ON "-DPOSVEC_FUZZ_COVERAGE=$coverage" "-DPOSVEC_FUZZ_SECONDS=$fuzz_seconds" \
      >/dev/null
  elif have_gcc_asan; then
    echo "dev.sh: clang++ with libFuzzer not found: ASan+UBSan with g++, fuzz harnesses skipped" \
      "(tools/scripts/setup.sh --test installs clang)" >&2
    cmake -S . -B "$dir" $(generator "$dir") "${san_flags[@]}" -DCMAKE_CXX_COMPILER=g++ \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DPOSVEC_SANITIZE=address,undefined -DPOSVEC_FUZZ=OFF \
      >/dev/null
  else
    echo "dev.sh: skipping the ASan+UBSan build and the fuzz harnesses: neither clang++ nor g++" \
      "links -fsanitize=address,undefined" >&2
    return 1
  fi
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

sanitizer_tests() {
  # ASan + UBSan: the whole unit suite (the CLI tests run the sanitized CLI) and
  # each fuzz harness over its seeds, then fuzz_seconds of fuzzing.
  if configure_asan; then
    stage "ASan+UBSan build" cmake --build "$build-asan" -j "$jobs"
    # LeakSanitizer: ignore what the OpenMP runtime keeps until exit (see the file).
    LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/sanitize/lsan.supp}" \
      stage "ASan+UBSan tests" ctest --test-dir "$build-asan" --output-on-failure -j "$jobs"
  fi
  # TSan: two-thread tokenizing and training, Hogwild weight races suppressed.
  # Portable code: TSan does not check 32- and 64-byte vector accesses (AVX2,
  # AVX-512), so a -march=native build would hide the kernels' memory accesses.
  if have_clang; then
    cmake -S . -B "$build-tsan" $(generator "$build-tsan") "${san_flags[@]}" -DCMAKE_CXX_COMPILER=clang++ \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DPOSVEC_SANITIZE=thread \
      -DPOSVEC_NATIVE=OFF -DPOSVEC_BUILD_TESTS=OFF -DPOSVEC_BUILD_TOOLS=OFF >/dev/null
    stage "TSan build" cmake --build "$build-tsan" -j "$jobs" --target tsan_train
    stage "TSan run" ctest --test-dir "$build-tsan" --output-on-failure
  else
    echo "dev.sh: skipping the TSan run: it needs clang++ and LLVM's OpenMP (libarcher)" \
      "(tools/scripts/setup.sh --test installs them)" >&2
  fi
}

fuzz() {
  local seconds="${1:-120}"
  have_clang || {
    echo "dev.sh: fuzzing needs clang++ with libFuzzer (tools/scripts/setup.sh --test)" >&2
    exit 1
  }
  # A build of its own, with coverage feedback in everything the harnesses call.
  configure_asan "$build-fuzz" ON
  local harnesses=()
  for src in tests/fuzz/*.cpp; do harnesses+=("fuzz_$(basename "$src" .cpp)"); done
  cmake --build "$build-fuzz" -j "$jobs" --target "${harnesses[@]}"
  local failed=() log
  for h in "${harnesses[@]}"; do
    log="$build-fuzz/fuzz-explore/${h#fuzz_}.log"
    mkdir -p "$(dirname "$log")"
    echo "== $h: $seconds s (log: $log)"
    # A random seed each run; new inputs collect in fuzz-explore/NAME/corpus.
    if bash tests/fuzz/run.sh "$build-fuzz/$h" "$seconds" "$build-fuzz/fuzz-explore/${h#fuzz_}" \
      >"$log" 2>&1; then
      grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | tr '\n' ' '
      echo
    else
      failed+=("$h")
      grep -E "ERROR|contract broken|SUMMARY|run.sh:" "$log" | head -5
    fi
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "dev.sh: fuzzing found failures in: ${failed[*]}" >&2
    exit 1
  fi
}

cmd="${1:-}"
shift || true
case "$cmd" in
  study)
    # Only the command line: the study needs neither the tests, the benchmarks
    # nor the Python module.
    do_build posvec_cli
    "$build/posvec" study "$@"
    ;;
  test)
    do_build -- --test
    # The unity build hides a file that compiles only beside the others of its unit:
    # posvec_unity_check (CMakeLists.txt) compiles each such file of the library and
    # the CLI alone, syntax only (the Release build compiles the test files alone).
    stage "unity check" cmake --build "$build" -j "$jobs" --target posvec_unity_check
    stage "Release tests" ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
    sanitizer_tests
    ;;
  build)
    do_build -- "$@"
    echo "dev.sh: the command line is $build/posvec (add $build to PATH, or install it:" \
      "cmake --install $build --prefix ~/.local)" >&2
    ;;
  docs)
    bash tools/scripts/setup.sh --docs
    bash tools/scripts/api-reference.sh "$build/docs"
    ;;
  mutate)
    bash tools/scripts/setup.sh --test
    exec bash tools/scripts/mutate.sh "$@"
    ;;
  sanitize)
    bash tools/scripts/setup.sh --test
    sanitizer_tests
    ;;
  fuzz)
    bash tools/scripts/setup.sh --test
    fuzz "$@"
    ;;
  *)
    echo "usage: tools/dev.sh study|test|build|docs|sanitize|fuzz [SECONDS]|mutate" >&2
    exit 2
    ;;
esac
