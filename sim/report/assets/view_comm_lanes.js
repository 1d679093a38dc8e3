// The communication lanes of the HTML report (html_comm_lanes.h; embedded at build time, inserted
// into report.js where its views go when a run has communication). One lane at the bottom of the
// gap under each device's row (the gap grows by 12 px): the device's p2p sends, TP collectives,
// data-parallel gradient buckets, ZeRO parameter gathers and expert all-to-all, each in its
// colour; full where the device does not compute meanwhile (exposed), pale where it does
// (hidden). A run's slices: [device, kind, start_us, end_us, exposed, name].
  GAP += 12;
  var COMM = { p: ['p2p send', '#409eff'], t: ['TP collective (inside the op)', '#9c755f'],
               d: ['DP gradient bucket', '#8e44ad'], z: ['ZeRO parameter gather', '#17becf'],
               a: ['all-to-all', '#e74c3c'] };
  function drawComm(g, run, px) {
    for (var d = 0; d < run.devices; d++) {
      var y = TOP + d * (ROW + GAP) + ROW + GAP - 11;
      el('rect', { x: LEFT, y: y, width: WIDTH, height: 8, fill: '#f7f7f7', 'class': 'comm-lane' }, g);
    }
    run.comm.forEach(function (c) {
      var kind = COMM[c[1]], x = px(c[2]), w = Math.max(px(c[3]) - x, 0.5);
      var r = el('rect', { x: x, y: TOP + c[0] * (ROW + GAP) + ROW + GAP - 11, width: w, height: 8,
                           fill: kind[1], 'fill-opacity': c[4] ? 1 : 0.3, 'class': 'comm',
                           'data-comm': c[1], 'data-exposed': c[4] }, g);
      el('title', {}, r).textContent = c[5] + ' on ' + gpuName(c[0]) + ': ' + fmtMs(c[3] - c[2]) + ' ' +
                                       (c[4] ? 'exposed' : 'hidden under compute') + ' (' + fmtMs(c[2]) +
                                       ' to ' + fmtMs(c[3]) + ')';
    });
  }
  HOOKS.timeline.push(function (g, run, px) { if (run.comm) drawComm(g, run, px); });
  HOOKS.legend.push(function (legend) {
    legendLine(legend, COMM, 'comm-legend', 'communication, in the lane under each device: ',
               '(full: the device does not compute meanwhile, exposed; pale: hidden under compute)');
  });
