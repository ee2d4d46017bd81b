#!/usr/bin/env bash
# Tokenizer throughput on the Brown corpus (brown-raw.txt, 6.1 MB): posvec's
# library at 1 and 2 threads against ICU's BreakIterators alone, the CLI end to
# end, and gensim's regex tokenizer as a peer, all measured in this run. Then the
# worst-case inputs (tokenizer_bench --worst-case): adversarial text at two sizes,
# whose time must double, not quadruple, when the text doubles.
# Usage: bash tools/bench/bench-tokenizer.sh [REPEAT]   (build first; BUILD=dir to choose;
#        WORST_MB=size of the larger worst-case inputs in MiB, default 8)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$root/build}"
repeat="${1:-5}"
bash "$root/tools/scripts/fetch-brown.sh"
data="$root/tools/bench/data/brown-raw.txt"
[ -x "$build/tokenizer_bench" ] && [ -x "$build/posvec" ] ||
  { echo "bench-tokenizer: build first (cmake --build $build)" >&2; exit 1; }
bytes=$(stat -c %s "$data")

echo "machine: $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg) (wall times suffer when it is above the core count; MB/cpu-s does not)"
"$build/tokenizer_bench" "$data" "$repeat"

# The CLI end to end (reading, tokenizing, writing the text out).
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
best() {  # best wall seconds of $repeat runs of "$@" with stdout to /dev/null
  local b=999999 t
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e" -o "$tmp" "$@" >/dev/null 2>/dev/null
    t=$(tail -1 "$tmp")
    b=$(echo "$t $b" | awk '{print ($1 < $2) ? $1 : $2}')
  done
  echo "$b"
}
cli1=$(best "$build/posvec" -q tokenize -t 1 "$data")
cli2=$(best "$build/posvec" -q tokenize -t 2 "$data")

# Peer: gensim's tokenize (one regex, lowercased, no sentences) on the same file.
gensim=$(/usr/bin/python3 - "$data" "$repeat" <<'PY' 2>/dev/null || echo nan
import sys, time
from gensim.utils import tokenize
path, repeat = sys.argv[1], int(sys.argv[2])
text = open(path, encoding="utf-8").read()
best = 1e30
for _ in range(min(repeat, 3)):
    t0 = time.perf_counter()
    n = sum(1 for _ in tokenize(text, lowercase=True))
    best = min(best, time.perf_counter() - t0)
print(best)
PY
)
awk -v b="$bytes" -v c1="$cli1" -v c2="$cli2" -v g="$gensim" 'BEGIN {
  mb = b / 1e6
  printf "  %-34s %9.3f %9.1f\n", "posvec tokenize CLI, 1 thread", c1, mb / c1
  printf "  %-34s %9.3f %9.1f\n", "posvec tokenize CLI, 2 threads", c2, mb / c2
  if (g != "nan") {
    printf "  %-34s %9.3f %9.1f\n", "gensim.utils.tokenize (Python)", g, mb / g
    printf "  posvec CLI 1 thread vs gensim tokenize: %.1fx faster\n", g / c1
  }
}'

echo
"$build/tokenizer_bench" --worst-case "${WORST_MB:-8}" "$(( repeat < 3 ? repeat : 3 ))"
