#!/usr/bin/env bash
# Browser test of the HTML report's topology graph (ctest label `browser`): for each SCENARIO with
# its expected number of drawn nodes, renders the report in headless Debian chromium and checks
#   - one graph (svg.topology) per schedule, exactly one shown, each with NODES nodes (g.topo-node)
#     laid out inside the drawing (measured after layout by a probe script);
#   - choosing the last schedule in the select shows its graph and hides the first;
#   - every link has a tooltip with its directed links, and one that carried data names its bytes
#     and busy time;
#   - the timelines' GPU labels are the topology's names (gpu0 ... or n0.gpu0 ...);
#   - no external request (no http(s) URL, no src= or href=) and no script error.
# Saves a screenshot of each graph.
#   usage: render_html_topology.sh BUBBLESIM OUT_DIR SCENARIO NODES [SCENARIO NODES ...]
set -euo pipefail

if (($# < 4 || $# % 2 != 0)); then
  echo "usage: $0 BUBBLESIM OUT_DIR SCENARIO NODES [SCENARIO NODES ...]" >&2
  exit 2
fi
bubblesim=$1
source "$(dirname "$0")/headless_chromium.sh"
start_chromium "$2"
shift 2

# Measures the graphs after layout: per svg "schedule:shown:nodes:inside" (inside: nodes whose box
# lies within the svg), then the same after choosing the last schedule in the select.
probe='<script>(function(){function m(){var out=[];document.querySelectorAll("svg.topology").forEach(function(s){'
probe+='var b=s.getBoundingClientRect(),n=s.querySelectorAll("g.topo-node"),k=0;n.forEach(function(g){'
probe+='var r=g.querySelector("rect").getBoundingClientRect();if(b.width>0&&r.width>0&&r.left>=b.left-0.5&&'
probe+='r.right<=b.right+0.5&&r.top>=b.top-0.5&&r.bottom<=b.bottom+0.5)k++;});'
probe+='out.push(s.dataset.schedule+":"+(b.width>0?1:0)+":"+n.length+":"+k);});return out.join(" ");}'
probe+='document.body.setAttribute("data-topology-before",m());var sel=document.getElementById("topology-schedule");'
probe+='if(sel){sel.selectedIndex=sel.options.length-1;sel.dispatchEvent(new Event("change"));}'
probe+='document.body.setAttribute("data-topology-after",m());'
probe+='var rows=[];document.querySelectorAll("svg.timeline text.device").forEach(function(t){rows.push(t.textContent);});'
probe+='document.body.setAttribute("data-device-labels",rows.join(" "));})();</script></body>'

status=0
case_no=0
while (($# > 0)); do
  scenario=$1 nodes=$2
  shift 2
  case_no=$((case_no + 1))
  report="$out/topology-$case_no.html"
  "$bubblesim" run "$scenario" -q --html "$report" >/dev/null || true  # exit 1: a failed schedule
  echo "== $scenario (expecting $nodes nodes per graph)"
  if grep -Eq 'https?://|src=|href=' "$report"; then
    echo "FAIL: the report refers to something outside the file" >&2
    status=1
  fi
  sed "s|</body>|${probe//&/\\&}|" "$report" >"$out/probe.html"  # & is sed's match
  dump_dom "file://$out/probe.html"
  before=$(grep -o 'data-topology-before="[^"]*"' "$out/dom.html" | sed 's/.*="//; s/"$//' || true)
  after=$(grep -o 'data-topology-after="[^"]*"' "$out/dom.html" | sed 's/.*="//; s/"$//' || true)
  labels=$(grep -o 'data-device-labels="[^"]*"' "$out/dom.html" | sed 's/.*="//; s/"$//' || true)
  echo "graphs (schedule:shown:nodes:inside): $before; after choosing the last: $after"
  echo "timeline GPU labels: $labels"
  if ! awk -v before="$before" -v after="$after" -v nodes="$nodes" 'BEGIN {
      n = split(before, g, " "); split(after, h, " ")
      if (n < 1) { print "FAIL: no topology graph" > "/dev/stderr"; exit 1 }
      for (i = 1; i <= n; i++) {
        split(g[i], a, ":"); split(h[i], b, ":")
        if (a[3] != nodes) { printf "FAIL: graph of %s has %s nodes, expected %s\n", a[1], a[3], nodes > "/dev/stderr"; exit 1 }
        if (a[2] != (i == 1)) { printf "FAIL: graph %d shown=%s before choosing\n", i, a[2] > "/dev/stderr"; exit 1 }
        if (a[2] == 1 && a[4] != nodes) { printf "FAIL: %s of %s nodes lie inside the drawing\n", a[4], nodes > "/dev/stderr"; exit 1 }
        if (n > 1 && b[2] != (i == n)) { printf "FAIL: graph %d shown=%s after choosing the last\n", i, b[2] > "/dev/stderr"; exit 1 }
      }
    }'; then
    status=1
  fi
  links=$(grep -c '<path class="topo-link"' "$report" || true)
  tips=$(grep -c '<path class="topo-link"[^>]*><title>[^<]*directed link' "$report" || true)
  # A tooltip line per direction that carried data ("gpu0->nvswitch0: busy 9.3207 us (...),
  # 4.00 MiB"), or an aggregated edge's summary ("12 carried traffic, 3.00 GiB in all; busiest 1.2 ms").
  busy=$(grep -Ec -- '(-&gt;[^:]*: busy [0-9.]+ [mun]?s \(.*\), [0-9.]+ ([KMGTP]i)?B$)|(carried traffic, [0-9.]+ ([KMGTP]i)?B in all; busiest [0-9.]+ [mun]?s)' "$report" || true)
  echo "links: $links, with a tooltip: $tips, naming busy time and bytes: $busy"
  if ((links == 0 || tips != links || busy == 0)); then
    echo "FAIL: links without tooltips, or no tooltip names busy time and bytes" >&2
    status=1
  fi
  if [[ ! "$labels" =~ gpu0 ]]; then
    echo "FAIL: the timelines do not use the topology's GPU names" >&2
    status=1
  fi
  if page_errors; then
    status=1
  fi
  # The graph alone, as drawn by the page's style.
  sed -n '1,/<\/style>/p' "$report" >"$out/graph-$case_no.html"
  sed -n '/<h2>topology<\/h2>/,/<svg id="svg-namespace"/p' "$report" >>"$out/graph-$case_no.html"
  if ! screenshot "file://$out/graph-$case_no.html" "$out/topology-$case_no.png" 1000,420; then
    status=1
  fi
done
if ((status == 0)); then
  echo "ok: topology graphs drawn, switchable, with tooltips, no external request; screenshots $out/topology-*.png"
fi
exit $status
