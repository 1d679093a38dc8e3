#!/usr/bin/env bash
# Browser test of the sweep plot (ctest label `browser`): runs SWEEP with --html, renders the page
# in headless Debian chromium, checks that the browser's DOM holds every chart and polyline of the
# file, that nothing was logged as an error, and saves a screenshot.
#   usage: render_sweep_plot.sh BUBBLESIM SWEEP OUT_DIR
# Leaves OUT_DIR/sweep.csv, sweep.html, dom.html, chromium.log and sweep-plot.png.
# Fails (exit 1) when chromium is missing: install it with BUBBLESIM_WITH_BROWSER=1 tools/setup.
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 BUBBLESIM SWEEP OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 sweep=$2 out=$3

browser=$(command -v chromium || true)
if [[ -z "$browser" ]]; then
  echo "FAIL: chromium is not installed; the browser test needs it (run BUBBLESIM_WITH_BROWSER=1 tools/setup," \
       "or apt-get install chromium)" >&2
  exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

"$bubblesim" sweep "$sweep" --jobs 2 -o "$out/sweep.csv" --html "$out/sweep.html"

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile")
url="file://$out/sweep.html"

timeout 90 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" >"$out/dom.html" \
  2>"$out/chromium.log" || { echo "FAIL: chromium --dump-dom failed (see $out/chromium.log)" >&2; exit 1; }

status=0
for element in '<svg class="chart"' '<polyline class="series"' '<circle class="point"' '<g class="legend-entry"'; do
  in_file=$(grep -o "$element" "$out/sweep.html" | wc -l)
  in_dom=$(grep -o "$element" "$out/dom.html" | wc -l)
  if ((in_file == 0 || in_dom != in_file)); then
    echo "FAIL: '$element': $in_file in the file, $in_dom in the browser's DOM" >&2
    status=1
  fi
done
if grep -E 'CONSOLE.*(Uncaught|[Ee]rror)' "$out/chromium.log" >&2; then
  echo "FAIL: console errors while rendering (above)" >&2
  status=1
fi

timeout 90 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1100,700 --screenshot="$out/sweep-plot.png" \
  "$url" >/dev/null 2>>"$out/chromium.log" || { echo "FAIL: chromium --screenshot failed" >&2; exit 1; }
if [[ ! -s "$out/sweep-plot.png" ]]; then
  echo "FAIL: no screenshot written" >&2
  status=1
fi

if ((status == 0)); then
  echo "ok: $(grep -o '<polyline class="series"' "$out/dom.html" | wc -l) polylines in the browser's DOM, no console" \
       "errors; screenshot $out/sweep-plot.png"
fi
exit $status
