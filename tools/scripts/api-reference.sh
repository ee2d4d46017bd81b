#!/usr/bin/env bash
# Builds the C++ API reference (Doxygen over include/posvec, see Doxyfile) into
# OUTPUT_DIR/html and fails, listing them, on any Doxygen warning: an undocumented
# public class, function, member, enumerator or type alias, or a malformed comment.
#   tools/scripts/api-reference.sh OUTPUT_DIR
# Exit 0: clean; 1: warnings (printed); 77: Doxygen is not installed (a skip for CTest).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: api-reference.sh OUTPUT_DIR}"
if ! command -v doxygen >/dev/null 2>&1; then
  echo "SKIP: doxygen is not installed (Debian package doxygen; tools/scripts/setup.sh --test installs it)"
  exit 77
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$out/doxygen-warnings.log"
rm -f "$log"
cd "$root"
# The settings of Doxyfile, then the output directory and the warnings file
# (a later assignment wins).
{
  cat Doxyfile
  echo "OUTPUT_DIRECTORY = \"$out\""
  echo "WARN_LOGFILE = \"$log\""
} | doxygen -
if [ -s "$log" ]; then
  cat "$log" >&2
  echo "api-reference: $(grep -c . "$log") Doxygen warning(s) in include/posvec (listed above); every public entity needs a /// comment" >&2
  exit 1
fi
echo "api-reference: $out/html/index.html (Doxygen $(doxygen --version), no warnings)"
