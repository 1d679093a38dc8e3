#!/usr/bin/env bash
# Browser test of the HTML report's MoE view (ctest label `browser`; docs/moe.md): renders the
# report of a MoE scenario in headless chromium and checks that it drew one element per table op,
# phase slices of every kind (routed experts 'e', slowed compute 's', all-to-all hidden 'h' and
# exposed 'x') on the lanes under the devices, an expert-memory band in every memory chart, and
# had no script errors; then that a dense scenario's page draws no lane. Saves a screenshot.
#   usage: render_html_moe.sh BUBBLESIM MOE_SCENARIO DENSE_SCENARIO OUT_DIR
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 BUBBLESIM MOE_SCENARIO DENSE_SCENARIO OUT_DIR" >&2
  exit 2
fi
bubblesim=$1 moe=$2 dense=$3 out=$4

source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$out"

status=0
"$bubblesim" run "$moe" --format json -o "$out/report.json" --html "$out/report.html"
table_ops=$(grep -o '"ops": [0-9]*' "$out/report.json" | awk '{s += $2} END {print s + 0}')
dump_dom "file://$out/report.html"
drawn=$(grep -o 'data-op="' "$out/dom.html" | wc -l)
if ((drawn != table_ops)); then
  echo "FAIL: drew $drawn ops, the tables have $table_ops" >&2
  status=1
fi
for kind in e s h x; do
  n=$(grep -o "data-phase=\"$kind\"" "$out/dom.html" | wc -l)
  if ((n == 0)); then
    echo "FAIL: no phase slice of kind '$kind' drawn" >&2
    status=1
  fi
done
# The scenario has a data-parallel gradient sync: every device's row ends with its tail.
tails=$(grep -o 'data-tail="sync"' "$out/dom.html" | wc -l)
if ((tails == 0)); then
  echo "FAIL: no gradient-sync tail drawn after the last ops" >&2
  status=1
fi
charts=$(grep -o 'class="memory"' "$out/dom.html" | wc -l)
bands=$(grep -o 'class="expert-static"' "$out/dom.html" | wc -l)
if ((charts == 0 || bands != charts)); then
  echo "FAIL: $bands expert-memory bands in $charts memory charts" >&2
  status=1
fi
if page_errors; then
  status=1
fi
if ! screenshot "file://$out/report.html" "$out/html-moe.png" 1400,1800; then
  status=1
fi

"$bubblesim" run "$dense" --html "$out/dense.html" >/dev/null
dump_dom "file://$out/dense.html"
if grep -q 'class="phase' "$out/dom.html"; then
  echo "FAIL: the dense scenario's page draws phase lanes" >&2
  status=1
fi
if page_errors; then
  status=1
fi

if ((status == 0)); then
  echo "ok: drew $drawn of $table_ops ops, every phase kind, $bands expert bands, no console errors;" \
       "screenshot $out/html-moe.png"
fi
exit $status
