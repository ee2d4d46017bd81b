#!/usr/bin/env bash
# Checks a `posvec study --report DIR` page in headless Chromium: the page loads
# offline, every figure file of DIR is drawn inline in the DOM, and a full-page
# screenshot is written for a human to look at.
#   tools/scripts/check-report.sh DIR [SCREENSHOT.png]   (default screenshot: a temp file, printed)
# Exit 0 when all figures are present, 1 when some are missing, 2 on usage or setup errors.
set -euo pipefail

dir="${1:-}"
if [ -z "$dir" ] || [ ! -f "$dir/index.html" ]; then
  echo "check-report: usage: tools/scripts/check-report.sh DIR [SCREENSHOT.png] (DIR must hold index.html)" >&2
  exit 2
fi
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "check-report: chromium is not installed (tools/scripts/setup.sh --report installs it)" >&2
  exit 2
fi
dir="$(cd "$dir" && pwd)"
shot="${2:-$(mktemp --suffix=.png)}"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --user-data-dir="$profile")

dom="$(timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$dir/index.html" 2>/dev/null)" || {
  echo "check-report: chromium could not load $dir/index.html" >&2
  exit 1
}
status=0
figures=0
for svg in "$dir"/*.svg; do
  [ -e "$svg" ] || continue
  name="$(basename "$svg")"
  figures=$((figures + 1))
  # Each figure sits in the page as <h2 id="NAME">, then an inline <svg>, and links its file.
  if ! grep -q "id=\"${name%.svg}\"" <<<"$dom" || ! grep -q "href=\"$name\"" <<<"$dom"; then
    echo "check-report: figure $name is not in the page's DOM" >&2
    status=1
  fi
done
inline="$(grep -o '<svg' <<<"$dom" | wc -l)"
if [ "$figures" -eq 0 ] || [ "$inline" -lt "$figures" ]; then
  echo "check-report: $figures figure files but $inline inline <svg> elements in the DOM" >&2
  status=1
fi
if grep -qi '<script' <<<"$dom"; then
  echo "check-report: the page contains a script (it must be static)" >&2
  status=1
fi
timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1100,11000 \
  --screenshot="$shot" "file://$dir/index.html" >/dev/null 2>&1 || {
  echo "check-report: chromium could not take a screenshot" >&2
  exit 1
}
echo "check-report: $figures figures in the DOM, $inline inline SVGs; screenshot: $shot"
exit "$status"
