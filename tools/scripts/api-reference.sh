#!/usr/bin/env bash
# Builds the C++ API reference (Doxygen over include/posvec, see Doxyfile) into
# OUTPUT_DIR/html and fails, listing them, on any Doxygen warning: an undocumented
# public class, function, member, enumerator or type alias, or a malformed comment
# (enumerators are checked in Doxygen's XML by api-reference-enums.py).
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
# The settings of Doxyfile, then the output directory, the warnings file and the
# XML the enumerator check reads (a later assignment wins).
{
  cat Doxyfile
  echo "OUTPUT_DIRECTORY = \"$out\""
  echo "WARN_LOGFILE = \"$log\""
  echo "GENERATE_XML = YES"
  echo "XML_PROGRAMLISTING = NO"
} | doxygen -
# Doxygen 1.9.x does not warn about an undocumented enumerator: check the XML.
if command -v python3 >/dev/null 2>&1; then
  python3 "$root/tools/scripts/api-reference-enums.py" "$out/xml" >>"$log" || true
else
  echo "api-reference: python3 not found, enumerators not checked" >&2
fi
if [ -s "$log" ]; then
  cat "$log" >&2
  echo "api-reference: $(grep -c . "$log") Doxygen warning(s) in include/posvec (listed above); every public entity needs a /// comment" >&2
  exit 1
fi
echo "api-reference: $out/html/index.html (Doxygen $(doxygen --version), no warnings)"
