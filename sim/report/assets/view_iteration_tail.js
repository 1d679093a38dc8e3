// The iteration-tail view of the HTML report (html_iteration_tail.h; embedded at build time,
// inserted into report.js where its views go when a run has an iteration tail): the exposed
// gradient sync and the optimizer step after each device's last op, as thinner bars.
  var TAILS = { sync: ['gradient sync exposed after the last op', '#b9b9b9'],
                step: ['optimizer step', '#6f6f6f'] };
  function drawTails(g, run, px) {
    run.tails.forEach(function (t) {
      var y = TOP + t[0] * (ROW + GAP);
      [['sync', t[1], t[2]], ['step', t[2], t[3]]].forEach(function (part) {
        if (part[2] <= part[1]) return;
        var x = px(part[1]), w = Math.max(px(part[2]) - x, 0.5);
        var r = el('rect', { x: x, y: y + 4, width: w, height: ROW - 8, fill: TAILS[part[0]][1], 'class': 'tail',
                             'data-tail': part[0] }, g);
        el('title', {}, r).textContent = TAILS[part[0]][0] + ' on ' + gpuName(t[0]) + ': ' +
                                         fmtMs(part[2] - part[1]) + ' (' + fmtMs(part[1]) + ' to ' + fmtMs(part[2]) + ')';
      });
    });
  }
  HOOKS.timeline.push(function (g, run, px) { if (run.tails) drawTails(g, run, px); });
  HOOKS.legend.push(function (legend) {
    legendLine(legend, TAILS, 'tail-legend', 'after each device\'s last op (thinner bars): ', '');
  });
