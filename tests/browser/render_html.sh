#!/usr/bin/env bash
# Browser test of the HTML report (ctest label `browser`): renders the report of SCENARIO in
# headless Debian chromium, checks that the page drew exactly one element per table op and had no
# script errors, and saves a screenshot.
#   usage: render_html.sh BUBBLESIM SCENARIO OUT_DIR
# Leaves OUT_DIR/report.html, report.json, dom.html, chromium.log and html-report.png.
# Fails (exit 1) when chromium is missing: install it with BUBBLESIM_WITH_BROWSER=1 tools/setup.
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 BUBBLESIM SCENARIO OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 out=$3

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

"$bubblesim" run "$scenario" --format json -o "$out/report.json" --html "$out/report.html"

# Ops in the tables, from the JSON report (`"ops": N` once per schedule).
table_ops=$(grep -o '"ops": [0-9]*' "$out/report.json" | awk '{s += $2} END {print s + 0}')
if ((table_ops == 0)); then
  echo "FAIL: the JSON report lists no ops" >&2
  exit 1
fi

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile")
url="file://$out/report.html"

# The DOM after the page's scripts ran; console messages (uncaught errors included) go to the log.
timeout 90 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" >"$out/dom.html" \
  2>"$out/chromium.log" || { echo "FAIL: chromium --dump-dom failed (see $out/chromium.log)" >&2; exit 1; }

status=0
drawn=$(grep -o 'data-op="' "$out/dom.html" | wc -l)
reported=$(grep -o 'data-drawn-ops="[0-9]*"' "$out/dom.html" | grep -o '[0-9]*' || true)
if [[ -z "$reported" ]]; then
  echo "FAIL: the page did not finish drawing (no data-drawn-ops on <body>)" >&2
  status=1
fi
if ((drawn != table_ops)); then
  echo "FAIL: drew $drawn ops, the tables have $table_ops" >&2
  status=1
fi
if [[ -n "$reported" && "$reported" != "$table_ops" ]]; then
  echo "FAIL: the page reports $reported drawn ops, the tables have $table_ops" >&2
  status=1
fi
if grep -q 'data-errors="' "$out/dom.html"; then
  echo "FAIL: the page recorded script errors: $(grep -o 'data-errors="[0-9]*"' "$out/dom.html")" >&2
  status=1
fi
if grep -E 'CONSOLE.*(Uncaught|[Ee]rror)' "$out/chromium.log" >&2; then
  echo "FAIL: console errors while rendering (above)" >&2
  status=1
fi

timeout 90 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1400,900 --screenshot="$out/html-report.png" \
  "$url" >/dev/null 2>>"$out/chromium.log" || { echo "FAIL: chromium --screenshot failed" >&2; exit 1; }
if [[ ! -s "$out/html-report.png" ]]; then
  echo "FAIL: no screenshot written" >&2
  status=1
fi

if ((status == 0)); then
  echo "ok: drew $drawn of $table_ops ops with no console errors; screenshot $out/html-report.png"
fi
exit $status
