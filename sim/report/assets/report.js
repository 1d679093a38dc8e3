// The HTML report's script (embedded at build time: sim/report/CMakeLists.txt): draws every run
// from the JSON in <script id="bubblesim-data">. Errors are counted on <html data-errors> by the
// handler installed first in <head>. Every timeline shares one time axis (data.span_us, the
// longest makespan) unless "fit each" is ticked; every memory chart shares one y-scale
// (data.memory_max). A timeline zooms with the wheel, pans by dragging, and double-click resets
// it. Each run's makespan is drawn as a bar (class "extent") under its rows, so a test can compare
// widths. The page holds no URL.
(function () {
  'use strict';
  // The SVG namespace, read from an inline <svg> so that the page holds no URL at all.
  var NS = document.getElementById('svg-namespace').namespaceURI;
  var COLORS = { F: '#4e79a7', B: '#59a14f', W: '#f28e2b', R: '#b07aa1', O: '#9c755f', L: '#76b7b2' };
  var NAMES = { F: 'forward', B: 'backward', W: 'weight grad', R: 'recompute', O: 'offload', L: 'reload', X: 'fused F&B' };
  var data = JSON.parse(document.getElementById('bubblesim-data').textContent);
  var LEFT = 140, WIDTH = 1130, ROW = 24, GAP = 6, TOP = 8;
  // Optional views (sim/report/assets/view_*.js, added where "views" stands below) set GAP
  // (room under each device row) and MEMORY_LINES (heading lines of a memory chart), and add
  // functions to the hooks the drawing calls: timeline(g, run, px) after a run's ops,
  // memory(chart, run, dev, geometry) before a memory chart's curves, legend(element).
  var MEMORY_LINES = 1;
  var HOOKS = { timeline: [], memory: [], legend: [] };
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceStep(span, target) {
    var raw = span / target, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function fmtMs(us) { var v = us / 1000; return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)) + ' ms'; }
  function fmtBytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + ' ' + u[i];
  }
  // Chunk c of n on a device: the kind's colour, lighter for later chunks.
  function shade(hex, c, n) {
    if (n <= 1 || c <= 0) return hex;
    var f = 0.45 * c / (n - 1), out = '#';
    for (var i = 1; i < 7; i += 2) {
      var v = parseInt(hex.substr(i, 2), 16);
      v = Math.round(v + (255 - v) * f);
      out += (v < 16 ? '0' : '') + v.toString(16);
    }
    return out;
  }
  function gpuName(d) { return data.device_names[d] || ('GPU ' + d); }
  // A timeline row's label: the GPU and the pipeline stages (virtual stages) it holds.
  function rowName(run, d) {
    var s = run.stages && run.stages[d];
    if (!s || !s.length) return gpuName(d);
    var text = s.length > 4 ? s.slice(0, 3).join(',') + ',...' : s.join(',');
    return gpuName(d) + ' \u00b7 ' + (s.length > 1 ? 'stages ' : 'stage ') + text;
  }
  function fitEach() { return document.getElementById('fit-each').checked; }
  function fullSpan(run) {
    var own = run.makespan_us > 0 ? run.makespan_us : 1;
    return fitEach() ? own : Math.max(data.span_us, own);
  }
  function axis(svg, x0, width, y, t0, t1) {
    var step = niceStep(t1 - t0, 8);
    for (var t = Math.ceil(t0 / step) * step; t <= t1 + 1e-9; t += step) {
      var x = x0 + (t - t0) / (t1 - t0) * width;
      el('line', { x1: x, x2: x, y1: y, y2: y + 4, stroke: '#888' }, svg);
      el('text', { x: x, y: y + 14, 'text-anchor': 'middle', fill: '#555' }, svg).textContent = fmtMs(t);
    }
  }
  // An aggregated run's utilisation bins (html_timeline_bins.h): per device four strings (F, B, W,
  // other) of one level character per bin. Drawn as a heat strip per device: each cell the kinds'
  // colours mixed by their busy shares, faded into the row background by the idle share; cells
  // are at least 2 px wide (bins merged) and equal neighbours are one rect.
  var LEVELS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', TOP_LEVEL = 63;
  var BG = [244, 244, 244];
  function rgb(hex) { return [1, 3, 5].map(function (i) { return parseInt(hex.substr(i, 2), 16); }); }
  var BIN_RGB = [rgb(COLORS.F), rgb(COLORS.B), rgb(COLORS.W), rgb(COLORS.O)];
  function binLevels(a) {
    if (a.levels) return a.levels;
    var code = {};
    for (var i = 0; i < LEVELS.length; i++) code[LEVELS.charAt(i)] = i;
    a.levels = a.busy.map(function (kinds) {
      return kinds.map(function (s) {
        var out = new Uint8Array(s.length);
        for (var j = 0; j < s.length; j++) out[j] = code[s.charAt(j)];
        return out;
      });
    });
    return a.levels;
  }
  function binColor(levels, from, to) {
    var f = [0, 0, 0, 0], total = 0;
    for (var k = 0; k < 4; k++) {
      for (var b = from; b < to; b++) f[k] += levels[k][b] / TOP_LEVEL / (to - from);
      total += f[k];
    }
    if (total <= 0) return null;
    var out = [], busy = Math.min(total, 1);
    for (var c = 0; c < 3; c++) {
      var mix = 0;
      for (k = 0; k < 4; k++) mix += BIN_RGB[k][c] * f[k] / total;
      out.push(Math.round(BG[c] + (mix - BG[c]) * busy));
    }
    return 'rgb(' + out.join(',') + ')';
  }
  function drawBins(g, run, px, t0, t1) {
    var a = run.aggregate, w = a.bin_us, levels = binLevels(a), count = 0;
    var step = Math.max(1, Math.ceil((t1 - t0) / w / (WIDTH / 2)));
    var start = Math.floor(t0 / w / step) * step, last = Math.min(a.bins, Math.ceil(t1 / w));
    for (var d = 0; d < run.devices; d++) {
      var y = TOP + d * (ROW + GAP), cell = null;
      var flush = function (end) {
        if (!cell || !cell.color) return;
        el('rect', { x: px(cell.from * w), y: y, width: px(end * w) - px(cell.from * w), height: ROW,
                     fill: cell.color, 'shape-rendering': 'crispEdges', 'class': 'bin' }, g);
        count++;
      };
      for (var b = start; b < last; b += step) {
        var from = Math.max(b, a.exact_bins), to = Math.min(b + step, last);
        if (from >= to) continue;
        var color = binColor(levels[d], from, to);
        if (cell && cell.color === color) continue;
        flush(from);
        cell = { from: from, color: color };
      }
      flush(last);
    }
    var xe = px(a.exact_until_us);
    if (xe > LEFT && xe < LEFT + WIDTH) {
      var line = el('line', { x1: xe, x2: xe, y1: TOP, y2: TOP + run.devices * (ROW + GAP) - GAP, stroke: '#333',
                              'stroke-dasharray': '3 3', 'class': 'exact-until' }, g);
      el('title', {}, line).textContent = 'exact ops before ' + fmtMs(a.exact_until_us) + ', utilisation bins after';
    }
    return count;
  }
  // A legend line: `intro`, a swatch per entry of `table` ({key: [label, colour, ...]}), `outro`.
  function legendLine(legend, table, cssClass, intro, outro) {
    var line = document.createElement('div');
    line.className = cssClass;
    line.appendChild(document.createTextNode(intro));
    Object.keys(table).forEach(function (k) {
      var s = document.createElement('span');
      var i = document.createElement('i');
      i.style.background = table[k][1];
      s.appendChild(i);
      s.appendChild(document.createTextNode(table[k][0]));
      line.appendChild(s);
    });
    if (outro) line.appendChild(document.createTextNode(outro));
    legend.appendChild(line);
  }
  /* views */
  var drawn = 0, tableOps = 0, aggregated = 0;
  function drawTimeline(svg, run, index) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var v = run.view, t0 = v[0], t1 = v[1], span = t1 - t0;
    function px(t) { return LEFT + (t - t0) / span * WIDTH; }
    var defs = el('defs', {}, svg);
    var clip = el('clipPath', { id: 'clip-' + index }, defs);
    el('rect', { x: LEFT, y: 0, width: WIDTH, height: TOP + run.devices * (ROW + GAP) + 10 }, clip);
    var pat = el('pattern', { id: 'fused-' + index, width: 8, height: 8, patternUnits: 'userSpaceOnUse',
                              patternTransform: 'rotate(45)' }, defs);
    el('rect', { width: 4, height: 8, fill: COLORS.F }, pat);
    el('rect', { x: 4, width: 4, height: 8, fill: COLORS.B }, pat);
    for (var d = 0; d < run.devices; d++) {
      var y = TOP + d * (ROW + GAP);
      el('rect', { x: LEFT, y: y, width: WIDTH, height: ROW, fill: '#f4f4f4' }, svg);
      el('text', { x: LEFT - 8, y: y + ROW / 2 + 4, 'text-anchor': 'end', 'class': 'device' }, svg).textContent = rowName(run, d);
    }
    var g = el('g', { 'clip-path': 'url(#clip-' + index + ')' }, svg);
    var count = 0;
    if (run.aggregate) drawBins(g, run, px, t0, t1);
    run.ops.forEach(function (op) {
      var dev = op[0], kind = op[1], mb = op[2], start = op[3], end = op[4], name = op[5], chunk = op[6];
      var x = px(start), w = Math.max((end - start) / span * WIDTH, 0.5), y = TOP + dev * (ROW + GAP);
      var r = el('rect', { x: x, y: y, width: w, height: ROW, 'class': 'op', 'data-op': name, 'data-kind': kind,
                           fill: kind === 'X' ? 'url(#fused-' + index + ')' : shade(COLORS[kind] || '#999999', chunk, run.chunks),
                           stroke: run.aggregate && w < 2 ? 'none' : '#fff', 'stroke-width': 0.5 }, g);
      el('title', {}, r).textContent = name + ' on ' + gpuName(dev) + ' (chunk ' + chunk + '): ' + fmtMs(start) + ' to ' + fmtMs(end);
      count++;
      if (w >= 7 * mb.length + 4 && x + w > LEFT && x < LEFT + WIDTH) {
        el('text', { x: Math.max(x, LEFT) + Math.min(w, LEFT + WIDTH - Math.max(x, LEFT)) / 2, y: y + ROW / 2 + 4,
                     'text-anchor': 'middle', fill: '#fff', 'pointer-events': 'none' }, g).textContent = mb;
      }
    });
    HOOKS.timeline.forEach(function (hook) { hook(g, run, px); });
    var base = TOP + run.devices * (ROW + GAP);
    var ext = Math.max(0, Math.min(px(run.makespan_us), LEFT + WIDTH) - Math.max(px(0), LEFT));
    el('rect', { x: Math.max(px(0), LEFT), y: base - 3, width: ext, height: 3, fill: '#333', 'class': 'extent',
                 'data-makespan-us': run.makespan_us }, svg);
    axis(svg, LEFT, WIDTH, base, t0, t1);
    return count;
  }
  function attachZoom(svg, run, index) {
    var drag = null;
    function timeAt(evt) {
      var box = svg.getBoundingClientRect(), f = (evt.clientX - box.left - LEFT) / WIDTH;
      return run.view[0] + Math.min(Math.max(f, 0), 1) * (run.view[1] - run.view[0]);
    }
    svg.addEventListener('wheel', function (evt) {
      evt.preventDefault();
      var t = timeAt(evt), k = evt.deltaY < 0 ? 0.8 : 1.25, full = fullSpan(run);
      var a = t - (t - run.view[0]) * k, b = t + (run.view[1] - t) * k;
      if (b - a >= full) { a = 0; b = full; }
      run.view = [Math.max(a, 0), Math.min(b, full)];
      drawTimeline(svg, run, index);
    });
    svg.addEventListener('mousedown', function (evt) { drag = { x: evt.clientX, view: run.view.slice() }; });
    window.addEventListener('mouseup', function () { drag = null; });
    svg.addEventListener('mousemove', function (evt) {
      if (!drag) return;
      var span = drag.view[1] - drag.view[0], dt = -(evt.clientX - drag.x) / WIDTH * span, full = fullSpan(run);
      var a = Math.min(Math.max(drag.view[0] + dt, 0), Math.max(full - span, 0));
      run.view = [a, a + span];
      drawTimeline(svg, run, index);
    });
    svg.addEventListener('dblclick', function () { run.view = [0, fullSpan(run)]; drawTimeline(svg, run, index); });
  }
  function drawMemory(box, run) {
    var span = fullSpan(run), ymax = data.memory_max > 0 ? data.memory_max * 1.05 : 1;
    run.memory.forEach(function (series, dev) {
      var W = 300, H = 114 + 12 * MEMORY_LINES, l = 56, top = 12 + 12 * MEMORY_LINES, b = 18, pw = W - l - 8, ph = H - b - top;
      var budget = run.budget.length ? run.budget[dev] : 0, peak = 0;
      series.forEach(function (s) { peak = Math.max(peak, s[2]); });
      var m = el('svg', { width: W, height: H, 'class': 'memory', 'data-device': dev }, box);
      // Labels sit above the plot, never on a curve.
      el('text', { x: l, y: 12, fill: '#333' }, m).textContent = gpuName(dev);
      el('text', { x: l + pw, y: 12, 'text-anchor': 'end', fill: peak > budget && budget > 0 ? '#b00' : '#333' }, m)
          .textContent = 'peak ' + fmtBytes(peak) + (budget > 0 ? ' / budget ' + fmtBytes(budget) : '');
      el('rect', { x: l, y: top, width: pw, height: ph, fill: '#fafafa', stroke: '#ccc' }, m);
      el('text', { x: l - 4, y: top + 4, 'text-anchor': 'end', fill: '#555' }, m).textContent = fmtBytes(ymax);
      el('text', { x: l - 4, y: top + ph, 'text-anchor': 'end', fill: '#555' }, m).textContent = '0';
      el('text', { x: l + pw, y: H - 4, 'text-anchor': 'end', fill: '#555' }, m).textContent = fmtMs(span);
      function px(t) { return l + Math.min(t / span, 1) * pw; }
      function py(v) { return top + ph - Math.min(v / ymax, 1) * ph; }
      if (budget > 0) {
        // Over-budget stretches: from a sample above the budget to the next sample.
        series.forEach(function (s, i) {
          if (s[2] <= budget) return;
          var next = i + 1 < series.length ? series[i + 1][0] : span;
          if (next > s[0]) el('rect', { x: px(s[0]), y: top, width: Math.max(px(next) - px(s[0]), 1), height: ph,
                                        fill: '#f4c7c3', 'class': 'over-budget' }, m);
        });
      }
      HOOKS.memory.forEach(function (hook) { hook(m, run, dev, { l: l, top: top, pw: pw, py: py }); });
      [[1, '#c7d7ea'], [2, '#2b5d8c']].forEach(function (c) {
        if (!series.length) return;
        var pts = [], prev = null;
        series.forEach(function (s, i) {
          // Several changes at one instant: draw only the level that holds afterwards.
          if (i + 1 < series.length && series[i + 1][0] === s[0]) return;
          if (prev !== null) pts.push(px(s[0]) + ',' + py(prev));
          pts.push(px(s[0]) + ',' + py(s[c[0]]));
          prev = s[c[0]];
        });
        pts.push(px(run.makespan_us) + ',' + py(prev));
        el('polyline', { points: pts.join(' '), fill: 'none', stroke: c[1], 'stroke-width': 1.5 }, m);
      });
      if (budget > 0) {
        el('line', { x1: l, x2: l + pw, y1: py(budget), y2: py(budget), stroke: '#c00', 'stroke-dasharray': '4 3',
                     'class': 'budget' }, m);
      }
    });
  }
  var root = document.getElementById('runs');
  function drawAll() {
    while (root.firstChild) root.removeChild(root.firstChild);
    drawn = 0; tableOps = 0; aggregated = 0;
    data.runs.forEach(function (run, index) {
      tableOps += run.table_ops;
      run.view = [0, fullSpan(run)];
      var section = document.createElement('section');
      section.className = 'run';
      section.setAttribute('data-schedule', run.label);
      root.appendChild(section);
      var h2 = document.createElement('h2');
      h2.textContent = run.label + ' (' + run.status + ', makespan ' + fmtMs(run.makespan_us) + ')';
      section.appendChild(h2);
      if (run.aggregate) {
        aggregated++;
        var p = document.createElement('p');
        p.className = 'aggregated';
        p.textContent = run.aggregate.note;
        section.appendChild(p);
      }
      var svg = el('svg', { width: LEFT + WIDTH + 10, height: TOP + run.devices * (ROW + GAP) + 24, 'class': 'timeline',
                            'data-schedule': run.label }, section);
      drawn += drawTimeline(svg, run, index);
      attachZoom(svg, run, index);
      if (run.memory.length) {
        var h3 = document.createElement('h3');
        h3.textContent = 'memory over time (total: solid, activations: light, budget: dashed red, over budget: shaded)';
        section.appendChild(h3);
        var box = document.createElement('div');
        box.className = 'mem';
        section.appendChild(box);
        drawMemory(box, run);
      }
    });
    document.body.setAttribute('data-drawn-ops', String(drawn));
    document.body.setAttribute('data-table-ops', String(tableOps));
    document.body.setAttribute('data-shared-axis', fitEach() ? 'false' : 'true');
    if (aggregated) document.body.setAttribute('data-aggregated-runs', String(aggregated));
  }
  var legend = document.getElementById('legend');
  Object.keys(NAMES).forEach(function (k) {
    var s = document.createElement('span');
    var i = document.createElement('i');
    i.style.background = k === 'X' ? 'repeating-linear-gradient(45deg,' + COLORS.F + ' 0 3px,' + COLORS.B + ' 3px 6px)'
                                   : COLORS[k];
    s.appendChild(i);
    s.appendChild(document.createTextNode(k + ' ' + NAMES[k]));
    legend.appendChild(s);
  });
  var note = document.createElement('span');
  note.textContent = 'later chunks (virtual stages) of a device are lighter';
  legend.appendChild(note);
  if (data.runs.some(function (run) { return run.aggregate; })) {
    var bins = document.createElement('div');
    bins.textContent = 'aggregated timelines: a cell mixes the kinds\' colours by busy share (other kinds: ' +
                       NAMES.O + ' colour) and is paler the more idle it is';
    legend.appendChild(bins);
  }
  HOOKS.legend.forEach(function (hook) { hook(legend); });
  document.getElementById('fit-each').addEventListener('change', drawAll);
  drawAll();
})();
