#!/usr/bin/env bash
# Runs one libFuzzer harness: first every committed seed (tests/fuzz/corpus/NAME),
# then fuzzing for SECONDS (0: seeds only). New inputs go to WORKDIR/corpus,
# a crashing input to WORKDIR/crash-* (with the command that reproduces it).
#   tests/fuzz/run.sh HARNESS SECONDS WORKDIR [libFuzzer flags...]
set -euo pipefail
harness="$1" seconds="$2" work="$3"
shift 3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="$(basename "$harness")"
name="${name#fuzz_}"
seeds="$here/corpus/$name"
[ -d "$seeds" ] || { echo "run.sh: no seed corpus $seeds" >&2; exit 1; }
mkdir -p "$work/corpus"
rm -f "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-* "$work"/slow-unit-*
flags=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1
       "-artifact_prefix=$work/")
if [ "$seconds" -gt 0 ]; then flags+=("-max_total_time=$seconds"); else flags+=(-runs=0); fi
# A dictionary of the format's tokens: NAME.dict, else the family's (vectors.dict).
for dict in "$here/$name.dict" "$here/${name%%_*}.dict"; do
  if [ -f "$dict" ]; then flags+=("-dict=$dict"); break; fi
done
# Per-harness flags (e.g. a larger -max_len for the tokenizer), one a line.
[ -f "$here/$name.options" ] && mapfile -t extra < <(grep -v '^#' "$here/$name.options") &&
  flags+=("${extra[@]}")
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/../sanitize/lsan.supp}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
set +e
"$harness" "${flags[@]}" "$@" "$work/corpus" "$seeds"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*; do
    [ -e "$f" ] && echo "run.sh: $name failed on $f; reproduce: $harness $f" >&2
  done
fi
exit $rc
