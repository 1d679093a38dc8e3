#include "tools/report/html_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/report/html_escape.h"
#include "tools/report/metric_format.h"
#include "tools/report/ranking.h"
#include "tools/report/report_format.h"

namespace bubblesim {
namespace {

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

nlohmann::json run_data(const Scenario& scenario, const ScheduleRun& run,
                        const MemoryTimeline* memory) {
  nlohmann::json j;
  j["label"] = run.label;
  j["status"] = run_status_name(run.simulation.status);
  j["devices"] = run.table.devices;
  j["makespan_us"] = us(run.simulation.metrics.makespan);
  j["table_ops"] = run.table.op_count();
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
    const auto& device_ops = run.table.device_ops[d];
    for (std::size_t i = 0; i < device_ops.size(); ++i) {
      const Op& op = device_ops[i];
      const OpTiming& t = run.simulation.timings[d][i];
      if (t.start.ps() < 0 || t.end.ps() < 0) continue;  // never ran (deadlock)
      std::string letter(1, op_kind_letter(op.kind));
      std::string mb = op.kind == OpKind::ForwardBackward
                           ? fmt::format("{}|{}", op.microbatch, op.backward_microbatch)
                           : std::to_string(op.microbatch);
      ops.push_back({d, letter, mb, us(t.start), us(t.end), to_string(op)});
    }
  }
  j["ops"] = ops;
  nlohmann::json mem = nlohmann::json::array();
  if (memory != nullptr) {
    for (std::int32_t d = 0; d < memory->devices(); ++d) {
      nlohmann::json series = nlohmann::json::array();
      for (const MemorySample& m : memory->samples(d))
        series.push_back({us(m.time), m.activation.count(), m.total.count()});
      mem.push_back(series);
    }
  }
  j["memory"] = mem;
  nlohmann::json budget = nlohmann::json::array();
  for (std::int32_t d = 0; d < run.table.devices; ++d) {
    if (std::optional<Bytes> b = memory_budget_of_device(scenario.memory, d))
      budget.push_back(b->count());
  }
  j["budget"] = budget;
  return j;
}

std::string summary_table(const Scenario& scenario, const ScenarioRun& result) {
  std::vector<const ScheduleRun*> runs;
  for (const ScheduleRun& r : result.runs) runs.push_back(&r);
  // One column group per level, from the metric table; status leads the simulation group.
  std::string groups = "<th rowspan=\"2\">schedule</th>", headings;
  std::vector<std::vector<std::string>> cells(runs.size());
  for (MetricLevel level : {MetricLevel::Formula, MetricLevel::Table, MetricLevel::Simulation}) {
    MetricColumns columns = metric_columns(column_metrics(level), scenario, runs);
    const bool status = level == MetricLevel::Simulation;
    groups +=
        fmt::format("<th colspan=\"{}\">{}</th>", columns.headings.size() + (status ? 1 : 0),
                    level == MetricLevel::Table ? "table (no comm)" : metric_level_name(level));
    if (status) headings += "<th>status</th>";
    for (const std::string& h : columns.headings) headings += "<th>" + escape_html(h) + "</th>";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (status) {
        cells[i].push_back(fmt::format("<td class=\"{}\">{}</td>",
                                       runs[i]->simulation.status == RunStatus::Ok ? "ok" : "fail",
                                       run_status_name(runs[i]->simulation.status)));
      }
      for (const std::string& c : columns.rows[i])
        cells[i].push_back("<td>" + escape_html(c) + "</td>");
    }
  }
  std::string h = "<table class=\"summary\"><thead><tr>" + groups + "</tr><tr>" + headings +
                  "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    h += "<tr><td>" + escape_html(runs[i]->label) + "</td>";
    for (const std::string& c : cells[i]) h += c;
    h += "</tr>\n";
  }
  h += "</tbody></table>\n";
  Ranking ranking = rank_schedules(result);
  auto list = [](const std::vector<std::string>& labels) {
    std::vector<std::string> escaped;
    for (const std::string& l : labels) escaped.push_back(escape_html(l));
    return escaped.empty() ? std::string("-") : fmt::format("{}", fmt::join(escaped, " &lt; "));
  };
  h += "<p class=\"ranking\">ranking, best first: formula: " + list(ranking.formula) +
       "; table: " + list(ranking.table) + "; simulation: " + list(ranking.simulation) + "</p>\n";
  if (!ranking.changes.empty()) {
    h += "<ul class=\"changes\">\n";
    for (const RankingChange& c : ranking.changes) {
      h += fmt::format("<li>{} beats {} at the {} level but not at the {} level: {}</li>\n",
                       escape_html(c.better), escape_html(c.worse), escape_html(c.from_level),
                       escape_html(c.to_level), escape_html(c.reason));
    }
    h += "</ul>\n";
  } else if (result.runs.size() > 1) {
    h += "<p>the ranking of schedules is the same at every level</p>\n";
  }
  for (const ScheduleRun& r : result.runs) {
    if (!r.simulation.failure.empty())
      h += fmt::format("<p class=\"fail\">{}: {}</p>\n", escape_html(r.label),
                       escape_html(r.simulation.failure));
  }
  for (const SkippedSchedule& s : result.skipped) {
    h += fmt::format("<p>skipped {}: {}</p>\n", escape_html(s.schedule), escape_html(s.reason));
  }
  return h;
}

constexpr const char* kStyle = R"CSS(
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 6px; }
h3 { font-size: 13px; margin: 10px 0 4px; color: #555; }
table.summary { border-collapse: collapse; margin: 8px 0; }
table.summary th, table.summary td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
table.summary td:first-child { text-align: left; } table.summary th { background: #f0f0f0; }
td.fail, p.fail { color: #b00; }
.legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px; }
.mem { display: flex; flex-wrap: wrap; gap: 8px; }
svg text { font: 10px system-ui, sans-serif; }
)CSS";

// Draws every run from the embedded JSON. Errors are counted on <html data-errors> by the
// handler installed first in <head>.
constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  // The SVG namespace, read from an inline <svg> so that the page holds no URL at all.
  var NS = document.getElementById('svg-namespace').namespaceURI;
  var COLORS = { F: '#4e79a7', B: '#59a14f', W: '#f28e2b', R: '#b07aa1', O: '#9c755f', L: '#76b7b2' };
  var NAMES = { F: 'forward', B: 'backward', W: 'weight grad', R: 'recompute', O: 'offload', L: 'reload', X: 'fused F&B' };
  var data = JSON.parse(document.getElementById('bubblesim-data').textContent);
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
  function axis(svg, x0, width, y, span) {
    var step = niceStep(span, 8);
    for (var t = 0; t <= span + 1e-9; t += step) {
      var x = x0 + t / span * width;
      el('line', { x1: x, x2: x, y1: y, y2: y + 4, stroke: '#888' }, svg);
      el('text', { x: x, y: y + 14, 'text-anchor': 'middle', fill: '#555' }, svg).textContent = fmtMs(t);
    }
  }
  var drawn = 0, tableOps = 0;
  var root = document.getElementById('runs');
  data.runs.forEach(function (run, index) {
    tableOps += run.table_ops;
    var section = document.createElement('section');
    section.className = 'run';
    section.setAttribute('data-schedule', run.label);
    root.appendChild(section);
    var h2 = document.createElement('h2');
    h2.textContent = run.label + ' (' + run.status + ', makespan ' + fmtMs(run.makespan_us) + ')';
    section.appendChild(h2);
    // Timeline.
    var left = 60, width = 1240, rowH = 24, gap = 6, top = 8;
    var span = run.makespan_us > 0 ? run.makespan_us : 1;
    var height = top + run.devices * (rowH + gap) + 24;
    var svg = el('svg', { width: left + width + 10, height: height, class: 'timeline' });
    section.appendChild(svg);
    var defs = el('defs', {}, svg);
    var pat = el('pattern', { id: 'fused-' + index, width: 8, height: 8, patternUnits: 'userSpaceOnUse',
                              patternTransform: 'rotate(45)' }, defs);
    el('rect', { width: 4, height: 8, fill: COLORS.F }, pat);
    el('rect', { x: 4, width: 4, height: 8, fill: COLORS.B }, pat);
    for (var d = 0; d < run.devices; d++) {
      var y = top + d * (rowH + gap);
      el('rect', { x: left, y: y, width: width, height: rowH, fill: '#f4f4f4' }, svg);
      el('text', { x: left - 8, y: y + rowH / 2 + 4, 'text-anchor': 'end' }, svg).textContent = 'GPU ' + d;
    }
    run.ops.forEach(function (op) {
      var dev = op[0], kind = op[1], mb = op[2], start = op[3], end = op[4], name = op[5];
      var x = left + start / span * width, w = Math.max((end - start) / span * width, 0.5);
      var y = top + dev * (rowH + gap);
      var r = el('rect', { x: x, y: y, width: w, height: rowH, 'class': 'op', 'data-op': name, 'data-kind': kind,
                           fill: kind === 'X' ? 'url(#fused-' + index + ')' : (COLORS[kind] || '#999'),
                           stroke: '#fff', 'stroke-width': 0.5 }, svg);
      el('title', {}, r).textContent = name + ' on GPU ' + dev + ': ' + fmtMs(start) + ' to ' + fmtMs(end);
      drawn++;
      if (w >= 7 * mb.length + 4) {
        el('text', { x: x + w / 2, y: y + rowH / 2 + 4, 'text-anchor': 'middle', fill: '#fff',
                     'pointer-events': 'none' }, svg).textContent = mb;
      }
    });
    axis(svg, left, width, top + run.devices * (rowH + gap), span);
    // Memory per device.
    if (run.memory.length) {
      var h3 = document.createElement('h3');
      h3.textContent = 'memory over time (total: solid, activations: light, budget: dashed red)';
      section.appendChild(h3);
      var box = document.createElement('div');
      box.className = 'mem';
      section.appendChild(box);
      run.memory.forEach(function (series, dev) {
        var W = 300, H = 110, l = 56, b = 18, pw = W - l - 8, ph = H - b - 14;
        var budget = run.budget.length ? run.budget[dev] : 0, ymax = budget;
        series.forEach(function (s) { ymax = Math.max(ymax, s[2]); });
        ymax = ymax > 0 ? ymax * 1.05 : 1;
        var m = el('svg', { width: W, height: H, class: 'memory', 'data-device': dev });
        box.appendChild(m);
        el('rect', { x: l, y: 8, width: pw, height: ph, fill: '#fafafa', stroke: '#ccc' }, m);
        el('text', { x: l + 4, y: 20, fill: '#333' }, m).textContent = 'GPU ' + dev;
        el('text', { x: l - 4, y: 12, 'text-anchor': 'end', fill: '#555' }, m).textContent = fmtBytes(ymax);
        var peak = 0;
        series.forEach(function (s) { peak = Math.max(peak, s[2]); });
        el('text', { x: l + pw - 4, y: 20, 'text-anchor': 'end', fill: '#333' }, m).textContent =
            'peak ' + fmtBytes(peak) + (budget > 0 ? ' / budget ' + fmtBytes(budget) : '');
        el('text', { x: l - 4, y: 8 + ph, 'text-anchor': 'end', fill: '#555' }, m).textContent = '0';
        el('text', { x: l + pw, y: H - 4, 'text-anchor': 'end', fill: '#555' }, m).textContent = fmtMs(span);
        function px(t) { return l + Math.min(t / span, 1) * pw; }
        function py(v) { return 8 + ph - v / ymax * ph; }
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
          pts.push(px(span) + ',' + py(prev));
          el('polyline', { points: pts.join(' '), fill: 'none', stroke: c[1], 'stroke-width': 1.5 }, m);
        });
        if (budget > 0) {
          el('line', { x1: l, x2: l + pw, y1: py(budget), y2: py(budget), stroke: '#c00', 'stroke-dasharray': '4 3',
                       'class': 'budget' }, m);
        }
      });
    }
  });
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
  document.body.setAttribute('data-drawn-ops', String(drawn));
  document.body.setAttribute('data-table-ops', String(tableOps));
})();
)JS";

}  // namespace

std::string render_html_report(const Scenario& scenario, const ScenarioRun& result,
                               const std::vector<const MemoryTimeline*>& memory) {
  nlohmann::json data;
  data["scenario"] = scenario.name;
  nlohmann::json runs = nlohmann::json::array();
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    runs.push_back(run_data(scenario, result.runs[i], i < memory.size() ? memory[i] : nullptr));
  }
  data["runs"] = runs;
  // '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the
  // block.
  std::string json;
  for (char c : data.dump()) {
    if (c == '<')
      json += "\\u003c";
    else
      json += c;
  }
  std::string title = escape_html(fmt::format("bubblesim: {}", scenario.name));
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title +
      "</title>\n"
      "<script>(function(){var n=0;function bump(){n++;document.documentElement.setAttribute("
      "'data-errors',String(n));}window.addEventListener('error',bump);var ce=console.error;"
      "console.error=function(){bump();return ce.apply(console,arguments);};})();</script>\n"
      "<style>" +
      std::string(kStyle) + "</style>\n</head>\n<body>\n<h1>" + title + "</h1>\n" +
      fmt::format("<p>p={} stages, m={} microbatches; timelines show the simulation replay.</p>\n",
                  scenario.stages, scenario.microbatches) +
      "<svg id=\"svg-namespace\" width=\"0\" height=\"0\"></svg>\n<div id=\"legend\" "
      "class=\"legend\"></div>\n<div id=\"runs\"></div>\n<h2>summary</h2>\n" +
      summary_table(scenario, result) + "<script type=\"application/json\" id=\"bubblesim-data\">" +
      json + "</script>\n<script>" + kScript + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace bubblesim
