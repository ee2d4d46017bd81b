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
# of downloading (files named as above). Files already in DIR are kept. Each file is
# written beside its final name and renamed into place when whole, so a failed or
# interrupted run leaves no partial file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage="usage: tools/scripts/fetch-eval.sh [--from SRC] [DIR]"
src="${POSVEC_EVAL_SOURCE:-}"
dir="" have_dir="" options=1
while [ $# -gt 0 ]; do
  if [ -n "$options" ]; then
    case "$1" in
      --from)
        case "${2:-}" in
          ""|-*) echo "fetch-eval: --from needs a directory ($usage)" >&2; exit 2 ;;
        esac
        src="$2"
        shift 2
        continue ;;
      --from=*)
        src="${1#--from=}"
        [ -n "$src" ] || { echo "fetch-eval: --from needs a directory ($usage)" >&2; exit 2; }
        shift
        continue ;;
      -h|--help) echo "$usage"; exit 0 ;;
      --) options=""; shift; continue ;;
      -?*) echo "fetch-eval: unknown option $1 ($usage)" >&2; exit 2 ;;
    esac
  fi
  [ -z "$have_dir" ] || { echo "fetch-eval: one directory only, got $dir and $1 ($usage)" >&2; exit 2; }
  dir="$1" have_dir=1
  shift
done
[ -n "$dir" ] || dir="$root/tools/bench/data"
case "$dir" in -*) dir="./$dir" ;; esac  # not an option to mkdir or mktemp

analogies_url="https://raw.githubusercontent.com/tmikolov/word2vec/master/questions-words.txt"
wordsim_url="http://www.gabrilovich.com/resources/data/wordsim353/wordsim353.zip"
simlex_url="https://fh295.github.io/SimLex-999.zip"
names=(questions-words.txt wordsim353.tsv simlex999.txt)

prog=fetch-eval
# shellcheck source=fetch-common.sh
source "$root/tools/scripts/fetch-common.sh"
refuse_non_files "${names[@]}"
mkdir -p -- "$dir"
missing=() kept=()
for n in "${names[@]}"; do
  if have "$dir/$n"; then kept+=("$n"); else missing+=("$n"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "fetch-eval: ${names[*]} already in $dir" >&2
  exit 0
fi
kept_note=""
[ ${#kept[@]} -eq 0 ] || kept_note=" (kept ${kept[*]}, already there)"


if [ -n "$src" ]; then
  for n in "${missing[@]}"; do
    have "$src/$n" || { echo "fetch-eval: $src has no $n" >&2; exit 1; }
  done
  for n in "${missing[@]}"; do
    stage "$n"
    cp -- "$src/$n" "$staged"
    mv -f -- "$staged" "$dir/$n"
  done
  echo "fetch-eval: copied ${missing[*]} from $src to $dir$kept_note" >&2
  exit 0
fi

tmp="$(mktemp -d)"
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
unzip_one() {  # URL ZIP MEMBER-PATTERN OUT
  python3 - "$@" <<'PY'
import fnmatch, sys, zipfile, zlib
url, path, pattern, out = sys.argv[1:]
try:
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if fnmatch.fnmatch(n, pattern)]
        if not names:
            sys.exit(f"fetch-eval: {url} has no {pattern}")
        data = z.read(names[0])
except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as e:
    sys.exit(f"fetch-eval: {url} did not give a readable zip file ({e})")
with open(out, "wb") as f:
    f.write(data)
PY
}

if ! have "$dir/questions-words.txt"; then
  stage questions-words.txt
  get "$analogies_url" "$staged" && [ -s "$staged" ] || offline "$analogies_url"
  mv -f -- "$staged" "$dir/questions-words.txt"
fi
if ! have "$dir/wordsim353.tsv"; then
  get "$wordsim_url" "$tmp/ws.zip" || offline "$wordsim_url"
  unzip_one "$wordsim_url" "$tmp/ws.zip" "*combined.tab" "$tmp/combined.tab"
  # combined.tab: a header line, then word1 TAB word2 TAB mean score.
  stage wordsim353.tsv
  { echo "# WordSim-353 ($wordsim_url)"
    echo "# Word 1	Word 2	Human (mean)"
    tail -n +2 "$tmp/combined.tab" | tr -d '\r'; } > "$staged"
  mv -f -- "$staged" "$dir/wordsim353.tsv"
fi
if ! have "$dir/simlex999.txt"; then
  get "$simlex_url" "$tmp/sl.zip" || offline "$simlex_url"
  unzip_one "$simlex_url" "$tmp/sl.zip" "*SimLex-999.txt" "$tmp/SimLex-999.txt"
  # SimLex-999.txt: a header line, then word1 word2 POS SimLex999 ... (tab-separated).
  stage simlex999.txt
  { echo "# SimLex-999 ($simlex_url)"
    echo "# Word 1	Word 2	Human (mean)"
    tail -n +2 "$tmp/SimLex-999.txt" | tr -d '\r' | awk -F '\t' '{ print $1 "\t" $2 "\t" $4 }'; } \
    > "$staged"
  mv -f -- "$staged" "$dir/simlex999.txt"
fi
echo "fetch-eval: wrote ${missing[*]} in $dir$kept_note" >&2
