#!/usr/bin/env bash
# Browser test of the HTML report (ctest label `browser`): renders the report of SCENARIO in
# headless Debian chromium, checks that the page drew exactly one element per table op and had no
# script errors, and saves a screenshot.
#   usage: render_html.sh BUBBLESIM SCENARIO OUT_DIR
# Leaves OUT_DIR/report.html, report.json, dom.html, chromium.log and html-report.png.
# Fails (exit 1) when chromium is missing (tests/browser/headless_chromium.sh).
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 BUBBLESIM SCENARIO OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 out=$3

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" run "$scenario" --format json -o "$out/report.json" --html "$out/report.html"

# Ops in the tables, from the JSON report (`"ops": N` once per schedule).
table_ops=$(grep -o '"ops": [0-9]*' "$out/report.json" | awk '{s += $2} END {print s + 0}')
if ((table_ops == 0)); then
  echo "FAIL: the JSON report lists no ops" >&2
  exit 1
fi

url="file://$out/report.html"

dump_dom "$url"

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
if page_errors; then
  status=1
fi

if ! screenshot "$url" "$out/html-report.png" 1400,900; then
  status=1
fi

if ((status == 0)); then
  echo "ok: drew $drawn of $table_ops ops with no console errors; screenshot $out/html-report.png"
fi
exit $status
