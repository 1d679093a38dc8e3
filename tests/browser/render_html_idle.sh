#!/usr/bin/env bash
# Browser test of the HTML verdict's idle time by cause (docs/outputs.md "Idle time by cause"):
# renders the report of SCENARIO in headless chromium, checks that the idle-split bars drew each
# of the parts named in PARTS (a comma-separated list of bubble, imbalance, p2p, collectives,
# all-to-all) with its own shade, that the page had no script errors, and saves a screenshot.
#   usage: render_html_idle.sh BUBBLESIM SCENARIO OUT_DIR PARTS
# Leaves OUT_DIR/report.html, dom.html, chromium.log and idle-split.png.
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 BUBBLESIM SCENARIO OUT_DIR PARTS" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 out=$3 parts=$4

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" run "$scenario" --html "$out/report.html" >/dev/null
url="file://$out/report.html"
dump_dom "$url"

status=0
if ! grep -q 'class="summary idle-split"' "$out/dom.html"; then
  echo "FAIL: the page has no idle-split table" >&2
  status=1
fi
declare -A shade
IFS=, read -ra wanted <<<"$parts"
for part in "${wanted[@]}"; do
  colour=$(grep -o "data-part=\"$part\" style=\"[^\"]*\"" "$out/dom.html" | head -1 |
    grep -o 'background:#[0-9a-f]*' || true)
  if [[ -z "$colour" ]]; then
    echo "FAIL: no bar shows the part '$part'" >&2
    status=1
    continue
  fi
  for other in "${!shade[@]}"; do
    if [[ "${shade[$other]}" == "$colour" ]]; then
      echo "FAIL: '$part' and '$other' have the same shade ($colour)" >&2
      status=1
    fi
  done
  shade[$part]=$colour
done
if page_errors; then
  status=1
fi
if ! screenshot "$url" "$out/idle-split.png" 1200,900; then
  status=1
fi
if ((status == 0)); then
  echo "ok: the idle split shows ${parts} in distinct shades; screenshot $out/idle-split.png"
fi
exit $status
