#!/usr/bin/env bash
# Browser test of the sweep plot (ctest label `browser`): runs SWEEP with --html, renders the page
# in headless Debian chromium, checks that the browser's DOM holds every chart and polyline of the
# file, that nothing was logged as an error, and saves a screenshot.
#   usage: render_sweep_plot.sh BUBBLESIM SWEEP OUT_DIR
# Leaves OUT_DIR/sweep.csv, sweep.html, dom.html, chromium.log and sweep-plot.png.
# Fails (exit 1) when chromium is missing (tests/browser/headless_chromium.sh).
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 BUBBLESIM SWEEP OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 sweep=$2 out=$3

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" sweep "$sweep" --jobs 2 -o "$out/sweep.csv" --html "$out/sweep.html"

url="file://$out/sweep.html"

dump_dom "$url"

status=0
for element in '<svg class="chart"' '<polyline class="series"' '<circle class="point"' '<g class="legend-entry"'; do
  in_file=$(grep -o "$element" "$out/sweep.html" | wc -l)
  in_dom=$(grep -o "$element" "$out/dom.html" | wc -l)
  if ((in_file == 0 || in_dom != in_file)); then
    echo "FAIL: '$element': $in_file in the file, $in_dom in the browser's DOM" >&2
    status=1
  fi
done
if console_errors; then
  status=1
fi

if ! screenshot "$url" "$out/sweep-plot.png" 1100,700; then
  status=1
fi

if ((status == 0)); then
  echo "ok: $(grep -o '<polyline class="series"' "$out/dom.html" | wc -l) polylines in the browser's DOM, no console" \
       "errors; screenshot $out/sweep-plot.png"
fi
exit $status
