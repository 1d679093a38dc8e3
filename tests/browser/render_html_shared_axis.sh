#!/usr/bin/env bash
# Browser test of the HTML report's comparison layout (ctest label `browser`): renders the report
# of SCENARIO (two schedules of different makespan) in headless Debian chromium and checks
#   - the verdict and summary come before the first timeline (summary on top);
#   - every timeline is drawn on one time axis: the makespan bars (class "extent") have widths in
#     the ratio of the makespans, measured on the laid-out page (getBoundingClientRect, written by
#     a probe script into the dumped DOM), within 1%;
#   - the file makes no external request (no http(s) URL, no src= or href= attribute).
# Saves a screenshot.
#   usage: render_html_shared_axis.sh BUBBLESIM SCENARIO OUT_DIR
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 BUBBLESIM SCENARIO OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 scenario=$2 out=$3

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

"$bubblesim" run "$scenario" -q --html "$out/report.html" >/dev/null
status=0
if grep -Eq 'https?://|src=|href=' "$out/report.html"; then
  echo "FAIL: the report refers to something outside the file:" >&2
  grep -Eo '.{20}(https?://|src=|href=).{20}' "$out/report.html" >&2
  status=1
fi

# A copy with a probe that measures the drawn makespan bars after layout.
probe='<script>(function(){var out=[];document.querySelectorAll("rect.extent").forEach(function(r){'
probe+='out.push(r.getAttribute("data-makespan-us")+":"+r.getBoundingClientRect().width);});'
probe+='document.body.setAttribute("data-measured-extents",out.join(" "));})();</script></body>'
sed "s|</body>|$probe|" "$out/report.html" >"$out/probe.html"
dump_dom "file://$out/probe.html"

measured=$(grep -o 'data-measured-extents="[^"]*"' "$out/dom.html" | sed 's/.*="//; s/"$//' || true)
if [[ -z "$measured" ]]; then
  echo "FAIL: the probe measured nothing (the page did not draw)" >&2
  exit 1
fi
echo "measured (makespan us:width px): $measured"
# Every bar's width over its makespan is the same scale (px per us) on a shared axis.
if ! awk -v m="$measured" 'BEGIN {
    n = split(m, pairs, " "); if (n < 2) { print "FAIL: fewer than two timelines" > "/dev/stderr"; exit 1 }
    for (i = 1; i <= n; i++) { split(pairs[i], p, ":"); s[i] = p[2] / p[1]; span[i] = p[1] }
    if (span[1] == span[2]) { print "FAIL: the makespans do not differ" > "/dev/stderr"; exit 1 }
    for (i = 2; i <= n; i++) if (s[i] / s[1] > 1.01 || s[i] / s[1] < 0.99) {
      printf "FAIL: timeline %d is drawn at %.4g px/us, timeline 1 at %.4g\n", i, s[i], s[1] > "/dev/stderr"; exit 1 }
  }'; then
  status=1
fi

verdict=$(grep -bo 'class="summary verdict"' "$out/dom.html" | head -1 | cut -d: -f1 || true)
timeline=$(grep -bo 'class="timeline"' "$out/dom.html" | head -1 | cut -d: -f1 || true)
if [[ -z "$verdict" || -z "$timeline" || "$verdict" -gt "$timeline" ]]; then
  echo "FAIL: the verdict is not above the first timeline (verdict at ${verdict:-none}, timeline at ${timeline:-none})" >&2
  status=1
fi
if page_errors; then
  echo "FAIL: script errors while rendering" >&2
  status=1
fi
if ! screenshot "file://$out/report.html" "$out/shared-axis.png" 1400,1400; then
  status=1
fi
if ((status == 0)); then
  echo "ok: shared time axis, verdict on top, no external request; screenshot $out/shared-axis.png"
fi
exit $status
