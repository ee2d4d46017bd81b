#!/usr/bin/env bash
# Fetches the three evaluation sets `posvec eval` reads, from their publishers, and
# writes them in DIR (default tools/bench/data):
#   questions-words.txt  Google's word analogies (19,544 questions in 14 sections), from
#                        the word2vec project (Mikolov et al. 2013; Apache License 2.0)
#   wordsim353.tsv       WordSim-353 relatedness pairs (Finkelstein et al. 2002), from the
#                        authors' page; the collection's terms are on that page
#   simlex999.txt        SimLex-999 similarity pairs (Hill, Reichart and Korhonen 2015),
#                        from the authors' page; the data set's terms are on that page
# The pair files are written as "word1<TAB>word2<TAB>score" lines with '#' comments.
#
#   tools/scripts/fetch-eval.sh [--from SRC] [DIR]
# --from SRC (or POSVEC_EVAL_SOURCE=SRC) copies local copies from directory SRC instead
# of downloading (files named as above). Files already in DIR are kept.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
src="${POSVEC_EVAL_SOURCE:-}"
if [ "${1:-}" = "--from" ]; then
  [ $# -ge 2 ] || { echo "fetch-eval: --from needs a directory" >&2; exit 2; }
  src="$2"
  shift 2
fi
dir="${1:-$root/tools/bench/data}"
mkdir -p "$dir"

analogies_url="https://raw.githubusercontent.com/tmikolov/word2vec/master/questions-words.txt"
wordsim_url="http://www.gabrilovich.com/resources/data/wordsim353/wordsim353.zip"
simlex_url="https://fh295.github.io/SimLex-999.zip"
names=(questions-words.txt wordsim353.tsv simlex999.txt)

have_all() {
  for n in "${names[@]}"; do [ -s "$dir/$n" ] || return 1; done
}
if have_all; then
  echo "fetch-eval: ${names[*]} already in $dir" >&2
  exit 0
fi

if [ -n "$src" ]; then
  for n in "${names[@]}"; do
    [ -s "$dir/$n" ] && continue
    [ -s "$src/$n" ] || { echo "fetch-eval: $src has no $n" >&2; exit 1; }
    cp "$src/$n" "$dir/$n.tmp" && mv "$dir/$n.tmp" "$dir/$n"
  done
  echo "fetch-eval: copied ${names[*]} from $src to $dir" >&2
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
get() {  # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsL --connect-timeout 10 --max-time 120 -o "$2" "$1" 2>/dev/null
  elif command -v wget >/dev/null 2>&1; then
    wget -q --timeout=10 -O "$2" "$1" 2>/dev/null
  else
    echo "fetch-eval: needs curl or wget (apt-get install curl)" >&2
    exit 1
  fi
}
offline() {
  echo "fetch-eval: cannot download $1 (offline?); copy ${names[*]} into $dir by hand, or" \
    "run tools/scripts/fetch-eval.sh --from DIR with local copies" >&2
  exit 1
}
unzip_one() {  # ZIP MEMBER-PATTERN OUT
  python3 - "$@" <<'EOF'
import fnmatch, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if fnmatch.fnmatch(n, sys.argv[2])]
    if not names:
        sys.exit(f"fetch-eval: {sys.argv[1]} has no {sys.argv[2]}")
    with open(sys.argv[3], "wb") as out:
        out.write(z.read(names[0]))
EOF
}

if [ ! -s "$dir/questions-words.txt" ]; then
  get "$analogies_url" "$tmp/q.txt" || offline "$analogies_url"
  mv "$tmp/q.txt" "$dir/questions-words.txt"
fi
if [ ! -s "$dir/wordsim353.tsv" ]; then
  get "$wordsim_url" "$tmp/ws.zip" || offline "$wordsim_url"
  unzip_one "$tmp/ws.zip" "*combined.tab" "$tmp/combined.tab"
  # combined.tab: a header line, then word1 TAB word2 TAB mean score.
  { echo "# WordSim-353 ($wordsim_url)"
    echo "# Word 1	Word 2	Human (mean)"
    tail -n +2 "$tmp/combined.tab" | tr -d '\r'; } > "$tmp/ws.tsv"
  mv "$tmp/ws.tsv" "$dir/wordsim353.tsv"
fi
if [ ! -s "$dir/simlex999.txt" ]; then
  get "$simlex_url" "$tmp/sl.zip" || offline "$simlex_url"
  unzip_one "$tmp/sl.zip" "*SimLex-999.txt" "$tmp/SimLex-999.txt"
  # SimLex-999.txt: a header line, then word1 word2 POS SimLex999 ... (tab-separated).
  { echo "# SimLex-999 ($simlex_url)"
    echo "# Word 1	Word 2	Human (mean)"
    tail -n +2 "$tmp/SimLex-999.txt" | tr -d '\r' | awk -F '\t' '{ print $1 "\t" $2 "\t" $4 }'; } \
    > "$tmp/sl.txt"
  mv "$tmp/sl.txt" "$dir/simlex999.txt"
fi
echo "fetch-eval: wrote ${names[*]} in $dir" >&2
