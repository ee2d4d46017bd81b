#!/usr/bin/env bash
# Load time of word2vec files, posvec vs gensim, on the same files in the same run
# (warm page cache: both read from memory, so this compares parsing, not the disk).
#   tools/bench/formats-vs-gensim.sh [WORDS] [DIM] [TEXT_WORDS]
# Default: a 100,000 x 512 binary file, and a 20,000 x 512 text file (gensim's
# text reader is slow). Needs the build (formats_load) and python3-gensim.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${POSVEC_BUILD_DIR:-$root/build}"
words="${1:-100000}"
dim="${2:-512}"
text_words="${3:-20000}"
[ -x "$build/formats_load" ] || { echo "formats-vs-gensim: build first ($build/formats_load missing)" >&2; exit 1; }
/usr/bin/python3 -c 'import gensim' 2>/dev/null || { echo "formats-vs-gensim: python3-gensim is needed" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/text"

gensim_load() {  # FILE BINARY -> best of 3 seconds
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import sys, time
from gensim.models import KeyedVectors
best = 1e30
for _ in range(3):
    t = time.perf_counter()
    KeyedVectors.load_word2vec_format(sys.argv[1], binary=sys.argv[2] == '1')
    best = min(best, time.perf_counter() - t)
print(f"{best:.3f}")
EOF
}

echo "== posvec: $words x $dim (all formats) and $text_words x $dim (text)"
"$build/formats_load" --words "$words" --dim "$dim" --dir "$tmp/bin" --formats bin,npy,model | tee "$tmp/bin.out"
"$build/formats_load" --words "$text_words" --dim "$dim" --dir "$tmp/text" --formats text | tee "$tmp/text.out"
posvec_bin="$(awk '$1 == "bin" { print $4 }' "$tmp/bin.out")"
posvec_text="$(awk '$1 == "text" { print $4 }' "$tmp/text.out")"
echo "== gensim $(/usr/bin/python3 -c 'import gensim; print(gensim.__version__)')"
gensim_bin="$(gensim_load "$tmp/bin/vectors.bin" 1)"
gensim_text="$(gensim_load "$tmp/text/vectors.txt" 0)"
awk -v pb="$posvec_bin" -v gb="$gensim_bin" -v pt="$posvec_text" -v gt="$gensim_text" -v w="$words" -v tw="$text_words" -v d="$dim" 'BEGIN {
  printf "binary %d x %d: posvec %.3f s, gensim %.3f s, gensim/posvec = %.1fx\n", w, d, pb, gb, gb / pb
  printf "text   %d x %d: posvec %.3f s, gensim %.3f s, gensim/posvec = %.1fx\n", tw, d, pt, gt, gt / pt
}'
