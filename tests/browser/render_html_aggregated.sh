#!/usr/bin/env bash
# Browser test of an aggregated HTML report (ctest label `browser`): SCENARIO is long enough that
# `run --html` aggregates every schedule (sim/report/html_timeline_bins.h). Checks that the page
# stays under MAX_BYTES, says on the page what was aggregated, draws exactly the embedded exact ops
# plus utilisation bins, and had no script errors; saves a screenshot.
#   usage: render_html_aggregated.sh BUBBLESIM SCENARIO OUT_DIR MAX_BYTES
# Fails (exit 1) when chromium is missing (tests/browser/headless_chromium.sh).
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 BUBBLESIM SCENARIO OUT_DIR MAX_BYTES" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 out=$3 max_bytes=$4

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" run "$scenario" -q -o "$out/report.txt" --html "$out/report.html"

status=0
bytes=$(stat -c %s "$out/report.html")
if ((bytes >= max_bytes)); then
  echo "FAIL: the report has $bytes bytes, the bound is $max_bytes" >&2
  status=1
fi
runs=$(grep -o '"aggregate":' "$out/report.html" | wc -l)
notes=$(grep -o '<p class="aggregated">[^<]*timeline aggregated: ' "$out/report.html" | wc -l)
exact=$(grep -o '"exact_ops":[0-9]*' "$out/report.html" | awk -F: '{s += $2} END {print s + 0}')
if ((runs == 0 || notes != runs)); then
  echo "FAIL: $runs aggregated runs but $notes notes on the page" >&2
  status=1
fi

url="file://$out/report.html"
dump_dom "$url"

drawn=$(grep -o 'data-op="' "$out/dom.html" | wc -l)
bins=$(grep -o 'class="bin"' "$out/dom.html" | wc -l)
reported=$(grep -o 'data-aggregated-runs="[0-9]*"' "$out/dom.html" | grep -o '[0-9]*' || true)
if [[ "$reported" != "$runs" ]]; then
  echo "FAIL: the page reports ${reported:-no} aggregated runs, the data has $runs" >&2
  status=1
fi
if ((drawn != exact)); then
  echo "FAIL: drew $drawn ops, the data embeds $exact exact ops" >&2
  status=1
fi
if ((bins == 0)); then
  echo "FAIL: no utilisation bins drawn" >&2
  status=1
fi
if page_errors; then
  status=1
fi
if ! screenshot "$url" "$out/html-report-aggregated.png" 1400,1600; then
  status=1
fi

if ((status == 0)); then
  echo "ok: $bytes bytes (< $max_bytes), $runs aggregated runs, drew $drawn exact ops and $bins bin cells;" \
       "screenshot $out/html-report-aggregated.png"
fi
exit $status
