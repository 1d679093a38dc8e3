#include "sim/report/html_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/report/html_escape.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/metric_format.h"

namespace bubblesim {
namespace {

struct ComparisonPart {
  double ComparisonRow::*seconds;
  const char* name;
  const char* colour;
};
// Compute first, then the idle split's parts in its shades (idle_split_report.cpp).
constexpr ComparisonPart kComparisonParts[] = {
    {&ComparisonRow::compute_s, "compute", "#59a14f"},
    {&ComparisonRow::bubble_s, "bubble", "#b0b0b0"},
    {&ComparisonRow::imbalance_s, "imbalance", "#e6a23c"},
    {&ComparisonRow::p2p_s, "p2p", "#409eff"},
    {&ComparisonRow::collectives_s, "collectives", "#8e44ad"},
    {&ComparisonRow::a2a_s, "all-to-all", "#e74c3c"}};

constexpr double kLabel = 330, kTime = 480, kGap = 200, kMemory = 260, kRow = 22, kTop = 24;  // px

std::string time_text(double s) { return format_metric(MetricUnit::Seconds, s); }
std::string size_text(double b) { return format_metric(MetricUnit::Bytes, b); }
// An axis tick: 3 significant digits at most ("20 ms", "1.5 s", "40 GiB").
std::string tick_text(double v, bool bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes && v > 0) {
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    return fmt::format("{:.3g} {}", v, units[u]);
  }
  if (v == 0) return "0";
  if (v >= 1) return fmt::format("{:.3g} s", v);
  if (v >= 1e-3) return fmt::format("{:.3g} ms", v * 1e3);
  return fmt::format("{:.3g} us", v * 1e6);
}

// About `count` ticks at 1, 2 or 5 x 10^k from 0 to the first at or above `top`.
std::vector<double> axis_ticks(double top, double count) {
  if (!(top > 0)) return {0.0, 1.0};
  const double raw = top / count, p = std::pow(10.0, std::floor(std::log10(raw))), m = raw / p;
  const double step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  std::vector<double> out{0.0};
  while (out.back() < top * (1 - 1e-9)) out.push_back(out.back() + step);
  return out;
}

}  // namespace

std::string comparison_chart_html(const std::vector<ComparisonRow>& rows,
                                  const std::string& caption) {
  if (rows.empty()) return "";
  double longest = 0, most = 0;
  for (const ComparisonRow& r : rows) {
    longest = std::max(longest, r.total_s);
    most = std::max({most, r.peak_memory_bytes, r.budget_bytes});
  }
  const std::vector<double> time_ticks = axis_ticks(longest, 5), memory_ticks = axis_ticks(most, 3);
  const double time_top = time_ticks.back(), memory_top = memory_ticks.back();
  const double width = kLabel + kTime + kGap + kMemory + 20;
  const double height = kTop + kRow * static_cast<double>(rows.size()) + 30;
  std::string svg = fmt::format(
      "<svg class=\"comparison\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\">\n",
      width, height, width, height);
  const double mx = kLabel + kTime + kGap;
  svg += fmt::format(
      "<text x=\"{:.0f}\" y=\"14\" class=\"cmp-head\">iteration time</text><text x=\"{:.0f}\" "
      "y=\"14\" class=\"cmp-head\">peak memory (dashed: budget)</text>\n",
      kLabel, mx);
  const double bottom = kTop + kRow * static_cast<double>(rows.size());
  // The grid lines and labels of one axis: ticks from `left`, `top` at `span` px.
  auto axis = [&](const std::vector<double>& ticks, double left, double top, double span,
                  bool bytes) {
    for (double v : ticks) {
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" stroke=\"#e4e4e4\"/>"
          "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\" fill=\"#555\">{4}</text>\n",
          left + v / top * span, kTop - 4, bottom, bottom + 14, escape_html(tick_text(v, bytes)));
    }
  };
  axis(time_ticks, kLabel, time_top, kTime, false);
  axis(memory_ticks, mx, memory_top, kMemory, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ComparisonRow& r = rows[i];
    const double y = kTop + kRow * static_cast<double>(i);
    svg += fmt::format("<g class=\"cmp-row\" data-label=\"{}\">", escape_html(r.label));
    svg += fmt::format(
        "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\" class=\"cmp-label\">{}</text>",
        kLabel - 6, y + 15, escape_html(r.label));
    double x = kLabel;
    for (const ComparisonPart& p : kComparisonParts) {
      const double s = r.*p.seconds;
      if (!(s > 0)) continue;
      const double w = s / time_top * kTime;
      svg += fmt::format(
          "<rect class=\"cmp-part\" data-part=\"{}\" x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" "
          "height=\"{:.0f}\" fill=\"{}\"><title>{}: {} {} ({:.1f}%)</title></rect>",
          p.name, x, y + 3, w, kRow - 6, p.colour, escape_html(r.label), p.name,
          escape_html(time_text(s)), r.total_s > 0 ? 100.0 * s / r.total_s : 0.0);
      x += w;
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" fill=\"#333\">{}{}</text>", x + 4, y + 15,
                       escape_html(time_text(r.total_s)),
                       r.note.empty() ? "" : ", " + escape_html(r.note));
    const bool over = r.budget_bytes > 0 && r.peak_memory_bytes > r.budget_bytes;
    const double w = r.peak_memory_bytes / memory_top * kMemory;
    svg += fmt::format(
        "<rect class=\"cmp-memory\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
        "fill=\"{}\"><title>{}: peak {}{}</title></rect>",
        mx, y + 5, w, kRow - 10, over ? "#d62728" : "#2b5d8c", escape_html(r.label),
        escape_html(size_text(r.peak_memory_bytes)),
        r.budget_bytes > 0 ? fmt::format(" of {} ({:.0f}%)", escape_html(size_text(r.budget_bytes)),
                                         100.0 * r.peak_memory_bytes / r.budget_bytes)
                           : "");
    if (r.budget_bytes > 0) {
      const double bx = mx + r.budget_bytes / memory_top * kMemory;
      svg += fmt::format(
          "<line class=\"cmp-budget\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.0f}\" "
          "stroke=\"#c00\" stroke-dasharray=\"3 2\"/>",
          bx, y + 2, y + kRow - 2);
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  std::string legend;
  for (const ComparisonPart& p : kComparisonParts) {
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", p.colour, p.name);
  }
  return "<figure class=\"comparison\"><figcaption>" + escape_html(caption) +
         "</figcaption>\n<div class=\"legend cmp-legend\">" + legend +
         "<span>(p2p, collectives and all-to-all: the communication left exposed)</span></div>\n" +
         svg + "</figure>\n";
}

std::vector<ComparisonRow> comparison_rows(const Scenario& scenario, const Verdict& verdict) {
  std::vector<ComparisonRow> out;
  for (const RankedSchedule& r : verdict.ranked) {
    const ScheduleRun& run = *r.run;
    const Metrics& m = run.simulation.metrics;
    ComparisonRow row;
    static_cast<IterationParts&>(row) = iteration_parts(run, r.time_s);
    row.label = run.label;
    row.total_s = r.time_s;
    for (std::size_t d = 0; d < m.memory.peak_memory_per_device.size(); ++d) {
      const double peak = m.memory.peak_memory_per_device[d].as_double();
      if (peak < row.peak_memory_bytes) continue;
      row.peak_memory_bytes = peak;
      const std::optional<Bytes> b =
          memory_budget_of_device(scenario.memory, static_cast<std::int32_t>(d));
      row.budget_bytes = b ? b->as_double() : 0.0;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace bubblesim
