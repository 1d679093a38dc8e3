// The MoE phases view of the HTML report (html_moe_phases.h; embedded at build time, inserted
// into report.js where its views go when a run has MoE phases). Drawn in the gap under each
// device's row (the gap grows from 6 to 22 px): the compute part (experts, slowed compute) at +2,
// the all-to-all (hidden, exposed) at +9, each 6 px high; the memory charts get a second heading
// line for the experts' bytes.
  GAP = 22;
  MEMORY_LINES = 2;
  var PHASES = { e: ['routed experts', '#499894', 0], s: ['compute slowed by all-to-all SMs', '#f1ce63', 0],
                 h: ['all-to-all hidden under compute', '#c9b2d6', 1], x: ['all-to-all exposed', '#e15759', 1] };
  function drawPhases(g, run, px) {
    for (var d = 0; d < run.devices; d++) {
      var y = TOP + d * (ROW + GAP) + ROW + 2;
      el('rect', { x: LEFT, y: y, width: WIDTH, height: 13, fill: '#fbfbfb', 'class': 'phase-lane' }, g);
    }
    run.phases.forEach(function (p) {
      var kind = PHASES[p[1]], x = px(p[2]), w = Math.max(px(p[3]) - x, 0.5);
      var r = el('rect', { x: x, y: TOP + p[0] * (ROW + GAP) + ROW + 2 + 7 * kind[2], width: w, height: 6,
                           fill: kind[1], 'class': 'phase', 'data-phase': p[1] }, g);
      el('title', {}, r).textContent = kind[0] + ' ' + p[4] + ' on ' + gpuName(p[0]) + ': ' + fmtMs(p[3] - p[2]) +
                                       ' (' + fmtMs(p[2]) + ' to ' + fmtMs(p[3]) + ')';
    });
  }
  function drawExpertMemory(m, e, l, top, pw, py) {
    if (!e || e[0] <= 0) return;
    el('rect', { x: l, y: py(e[0]), width: pw, height: py(0) - py(e[0]), fill: PHASES.e[1], 'fill-opacity': 0.25,
                 'class': 'expert-static' }, m);
    el('text', { x: l, y: 25, fill: '#2f6663', 'class': 'expert-memory' }, m).textContent =
        'experts ' + fmtBytes(e[0]) + ' static, ' + fmtBytes(e[1]) + '/mb';
  }
  HOOKS.timeline.push(function (g, run, px) { if (run.phases) drawPhases(g, run, px); });
  HOOKS.memory.push(function (m, run, dev, c) {
    if (run.experts) drawExpertMemory(m, run.experts[dev], c.l, c.top, c.pw, c.py);
  });
  HOOKS.legend.push(function (legend) {
    legendLine(legend, PHASES, 'phase-legend', 'under each device (MoE): ',
               '(upper: compute, lower: all-to-all; memory: the experts\' static band)');
  });
