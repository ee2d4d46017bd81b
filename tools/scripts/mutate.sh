#!/usr/bin/env bash
# Mutation testing: applies each mutant of tools/scripts/mutants.txt to the source, one at a
# time, rebuilds incrementally in a separate build directory, runs the test suite
# (ctest) and restores the source. A mutant is caught when the suite fails or
# times out (a hang counts as caught). Prints the score and the survivors.
#
#   tools/dev.sh mutate [--check] [--only ID[,ID...]] [--list FILE]
#
# --check only reports which snippets apply. Environment: POSVEC_MUTATE_BUILD_DIR
# (default build-mutate), POSVEC_MUTATE_TIMEOUT (seconds per suite run, default 900),
# POSVEC_MUTATE_JOBS (default 2).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
list="$root/tools/scripts/mutants.txt"
only=""
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --only) only=",$2,"; shift ;;
    --list) list="$2"; shift ;;
    *) echo "usage: tools/dev.sh mutate [--check] [--only ID,...] [--list FILE]" >&2; exit 2 ;;
  esac
  shift
done
build="${POSVEC_MUTATE_BUILD_DIR:-$root/build-mutate}"
limit="${POSVEC_MUTATE_TIMEOUT:-900}"
jobs="${POSVEC_MUTATE_JOBS:-2}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# apply FILE OCCURRENCE ORIGINAL REPLACEMENT: replaces one literal occurrence in place;
# exit 3 when the snippet is not found that many times.
apply() {
  python3 - "$@" <<'PY'
import sys
path, occ, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
text = open(path, encoding="utf-8").read()
at = -1
for _ in range(occ):
    at = text.find(old, at + 1)
    if at < 0:
        sys.exit(3)
open(path, "w", encoding="utf-8").write(text[:at] + new + text[at + len(old):])
PY
}

backup=""
target=""
restore() {
  if [ -n "$backup" ] && [ -f "$backup" ]; then
    cp -p "$backup" "$target" && rm -f "$backup"
    # The restored file must be rebuilt: make it newer than the mutant's object.
    touch "$target"
  fi
  backup=""
}
trap 'restore; echo "interrupted: source restored" >&2; exit 130' INT TERM
trap restore EXIT

if [ "$check" = 0 ]; then
  echo "configuring $build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null || exit 1
  echo "building the unmutated tree"
  cmake --build "$build" -j "$jobs" >/dev/null || { echo "the unmutated tree does not build" >&2; exit 1; }
  # A mutant is caught when the suite fails: the suite must pass without one.
  start=$(date +%s)
  if ! ctest --test-dir "$build" -j "$jobs" --timeout "$limit" >"$build/mutate-baseline.log" 2>&1; then
    echo "the suite fails on the unmutated tree (see $build/mutate-baseline.log)" >&2
    exit 1
  fi
  echo "unmutated suite passes ($(( $(date +%s) - start ))s): $(grep -m1 'tests passed' "$build/mutate-baseline.log")"
fi

total=0 caught=0 notApplied=0 notBuilt=0
survivors=()
log="$build/mutate-last.log"
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  IFS=$'\x1f' read -r id file occ old new what <<<"${line// @@ /$'\x1f'}"
  if [ -n "$only" ] && [[ "$only" != *",$id,"* ]]; then continue; fi
  if [ ! -f "$file" ]; then
    echo "$id not applied (no file $file): $what"; notApplied=$((notApplied + 1)); continue
  fi
  target="$file"
  backup="$(mktemp "${TMPDIR:-/tmp}/posvec-mutate.XXXXXX")"
  cp -p "$file" "$backup"
  if ! apply "$file" "$occ" "$old" "$new"; then
    restore
    echo "$id not applied (snippet not found): $what"; notApplied=$((notApplied + 1)); continue
  fi
  if [ "$check" = 1 ]; then
    restore; echo "$id applies: $what"; continue
  fi
  start=$(date +%s)
  if ! cmake --build "$build" -j "$jobs" >"$log" 2>&1; then
    restore
    echo "$id not built (compile error, not counted): $what"; notBuilt=$((notBuilt + 1)); continue
  fi
  total=$((total + 1))
  timeout --kill-after=10 "$limit" ctest --test-dir "$build" -j "$jobs" --stop-on-failure \
    --timeout "$limit" >>"$log" 2>&1
  rc=$?
  restore
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then
    survivors+=("$id ($file): $what")
    echo "$id SURVIVED (${secs}s): $what"
  else
    caught=$((caught + 1))
    failed="$(grep -m1 -E '\*\*\*Failed|\(Failed\)|Timeout|Exception' "$log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.\.\..*//')"
    [ $rc -eq 124 ] && failed="suite timed out"
    echo "$id caught (${secs}s) by ${failed:-exit $rc}: $what"
  fi
done <"$list"

[ "$check" = 1 ] && exit 0
# Rebuild the restored tree so the build directory matches the source again.
cmake --build "$build" -j "$jobs" >/dev/null 2>&1
echo
if [ $total -gt 0 ]; then
  echo "mutation score: $caught of $total caught ($(( 100 * caught / total ))%)," \
    "$notApplied not applied, $notBuilt not built"
else
  echo "no mutant was run ($notApplied not applied, $notBuilt not built)"
fi
if [ ${#survivors[@]} -gt 0 ]; then
  echo "survivors:"
  printf '  %s\n' "${survivors[@]}"
fi
