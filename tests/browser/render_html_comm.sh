#!/usr/bin/env bash
# Browser test of the HTML reports' comparison chart and communication lanes (ctest label
# `browser`): renders the run report of SCENARIO (TP 2, PP 2, DP 2 with ZeRO-1 across two nodes,
# two schedules) and the `bubblesim plan` page of PLAN in headless Debian chromium and checks
#   - the comparison chart: one row per schedule (per ranked layout on the plan page), each split
#     into compute and idle parts;
#   - the communication lanes under the devices: p2p sends, TP collectives, data-parallel buckets
#     and ZeRO gathers, with exposed and hidden pieces; the timeline rows name their stages;
#   - both pages fit a 1400 px window (the laid-out document is no wider, measured by a probe)
#     and had no script errors.
# Saves the screenshots comm-report.png (the top: verdict and chart), comm-lanes.png (the
# timelines with their lanes) and plan.png.
#   usage: render_html_comm.sh BUBBLESIM SCENARIO PLAN OUT_DIR
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 BUBBLESIM SCENARIO PLAN OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 plan=$3 out=$4

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" run "$scenario" -q --format json -o "$out/report.json" --html "$out/report.html"
"$bubblesim" plan "$plan" -q --replays 6 --time-budget 0 --format json -o "$out/plan.json" \
  --html "$out/plan.html"
status=0
fail() {
  echo "FAIL: $*" >&2
  status=1
}
count() { grep -o "$1" "$2" | wc -l; }

# The width of the laid-out document, written by a probe into the dumped DOM.
probe='<script>window.addEventListener("load",function(){document.body.setAttribute('
probe+='"data-page-width",String(document.documentElement.scrollWidth));});</script></body>'
measure() {  # PAGE -> $out/dom.html with data-page-width
  sed "s|</body>|$probe|" "$1" >"$out/probe.html"
  dump_dom "file://$out/probe.html"
  width=$(grep -o 'data-page-width="[0-9]*"' "$out/dom.html" | grep -o '[0-9]*' || true)
  if [[ -z "$width" ]]; then
    fail "$1: the probe measured nothing"
  elif ((width > 1400)); then
    fail "$1 is $width px wide, more than the 1400 px window"
  fi
  if page_errors; then
    fail "$1: script errors while rendering"
  fi
}

measure "$out/report.html"
schedules=$(grep -o '"label": "[^"]*"' "$out/report.json" | wc -l)
rows=$(count 'class="cmp-row"' "$out/dom.html")
((rows == schedules)) || fail "the comparison chart has $rows rows for $schedules schedules"
(($(count 'data-part="compute"' "$out/dom.html") == schedules)) || fail "a chart row has no compute part"
(($(count 'data-part="bubble"' "$out/dom.html") >= 1)) || fail "no chart row shows its bubble"
for kind in p t d z; do
  n=$(count "data-comm=\"$kind\"" "$out/dom.html")
  ((n > 0)) || fail "no communication slice of kind $kind in the lanes"
  echo "lane slices of kind $kind: $n"
done
(($(count 'data-exposed="1"' "$out/dom.html") > 0)) || fail "no exposed communication drawn"
(($(count 'data-exposed="0"' "$out/dom.html") > 0)) || fail "no hidden communication drawn"
grep -q '· stage 1<' "$out/dom.html" || fail "the timeline rows do not name their stages"
grep -q '<caption>collectives</caption>' "$out/dom.html" || fail "no collectives table"

measure "$out/plan.html"
ranked=$(grep -c '"beats_next"' "$out/plan.json" || true)
plan_rows=$(count 'class="cmp-row"' "$out/dom.html")
((plan_rows == ranked && ranked >= 5)) || fail "the plan's chart has $plan_rows rows for $ranked ranked layouts"

# The screenshots: the top of the report, its timelines alone (the sections above hidden in a
# copy), and the plan page.
screenshot "file://$out/report.html" "$out/comm-report.png" 1400,900 || status=1
awk '/<h1>/ && !done { sub(/<h1>/, "<div style=\"display:none\"><h1>"); done = 1 }
     /<svg id="svg-namespace"/ { sub(/<svg id="svg-namespace"/, "</div><svg id=\"svg-namespace\"") }
     { print }' "$out/report.html" >"$out/lanes.html"
screenshot "file://$out/lanes.html" "$out/comm-lanes.png" 1400,900 || status=1
screenshot "file://$out/plan.html" "$out/plan.png" 1400,1000 || status=1
if ((status == 0)); then
  echo "ok: chart and lanes drawn, pages within 1400 px; screenshots in $out"
fi
exit $status
