#include "sim/report/sweep_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "sim/report/html_escape.h"
#include "sim/report/sweep_plot_axes.h"
#include "sim/report/text_report.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

using namespace sweep_plot_axes;

std::vector<std::string> split_header(std::string line) {
  if (!line.empty() && line.back() == '\n') line.pop_back();
  std::vector<std::string> fields;
  std::size_t begin = 0;
  while (true) {
    std::size_t comma = line.find(',', begin);
    fields.push_back(
        line.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return fields;
    begin = comma + 1;
  }
}

// The run report's columns (scenario .. recompute_s).
std::vector<std::string> report_columns() { return split_header(csv_report_header()); }

struct Row {
  std::string label, status, value, error;
};

// Why a series has no valid point at an x.
struct Missing {
  std::size_t x = 0;
  std::string label;  // "" when the whole point is invalid and no schedule is known
  std::string reason;
};

constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                                   "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

constexpr const char* kStyle = R"CSS(
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 6px; }
svg text { font: 11px system-ui, sans-serif; }
ul.missing-list { margin: 4px 0 0; color: #b00; }
p.none { color: #555; }
)CSS";

// Chart geometry (SVG user units).
constexpr double kLeft = 72, kPlotW = 600, kStripTop = 10, kStripH = 20, kTop = 40, kPlotH = 260;
constexpr double kLegendX = kLeft + kPlotW + 24;

std::string num(double v) { return fixed(v, 1); }

struct ChartInput {
  std::string title;
  const XAxis* x = nullptr;
  std::string x_title, y_title;
  std::vector<std::string> series;           // labels drawn in this chart, in order
  std::map<std::string, std::size_t> color;  // label -> palette index
  std::map<std::pair<std::size_t, std::string>, double> value;  // (x, label) -> valid y
  std::vector<Missing> missing;
};

std::string render_chart(const ChartInput& c, std::size_t index) {
  const XAxis& x = *c.x;
  const std::size_t n = x.labels.size();
  // x positions.
  std::vector<double> px(n);
  std::vector<std::pair<double, std::string>> xticks;
  if (!x.values.empty()) {
    double lo = *std::min_element(x.values.begin(), x.values.end());
    double hi = *std::max_element(x.values.begin(), x.values.end());
    if (hi == lo) {
      lo -= 1;
      hi += 1;
    }
    const double pad = 16;
    auto map = [&](double v) { return kLeft + pad + (v - lo) / (hi - lo) * (kPlotW - 2 * pad); };
    for (std::size_t i = 0; i < n; ++i) px[i] = map(x.values[i]);
    double step = nice_step(hi - lo, 8);
    for (double t : ticks(lo, hi, step)) {
      xticks.emplace_back(map(t), tick_label(t, step) + (x.unit.empty() ? "" : " " + x.unit));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      px[i] = kLeft + kPlotW * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
      xticks.emplace_back(px[i], x.labels[i]);
    }
  }
  // y range over the valid points, from 0 (or below) to a tick at or above the largest.
  double ylo = 0, yhi = 0;
  for (const auto& [key, v] : c.value) {
    ylo = std::min(ylo, v);
    yhi = std::max(yhi, v);
  }
  if (yhi == ylo) yhi = ylo + 1;
  double ystep = nice_step(yhi - ylo, 5);
  ylo = std::floor(ylo / ystep + 1e-9) * ystep;
  yhi = std::ceil(yhi / ystep - 1e-9) * ystep;
  auto py = [&](double v) { return kTop + kPlotH - (v - ylo) / (yhi - ylo) * kPlotH; };

  double legend_h = 30 + 18.0 * static_cast<double>(c.series.size() + 1);
  double height = std::max(kTop + kPlotH + 48, legend_h);
  std::size_t longest = 24;  // "no value (listed below)"
  for (const std::string& label : c.series) longest = std::max(longest, label.size());
  const double width = kLegendX + 40 + 6.5 * static_cast<double>(longest);
  std::string s = fmt::format(
      "<svg class=\"chart\" data-chart=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\">\n",
      index, num(width), num(height), num(width), num(height));
  s += fmt::format("<title>{}</title>\n", escape_html(c.title));
  // The "no value" strip and the plot frame.
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbeeee\"/>\n",
                   num(kLeft), num(kStripTop), num(kPlotW), num(kStripH));
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#b00\">no value</text>\n",
                   num(kLeft - 6), num(kStripTop + kStripH / 2 + 4));
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#bbb\"/>\n",
      num(kLeft), num(kTop), num(kPlotW), num(kPlotH));
  // Ticks and grid.
  for (double t : ticks(ylo, yhi, ystep)) {
    double y = py(t);
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#e4e4e4\"/>\n",
                     num(kLeft), num(kLeft + kPlotW), num(y), num(y));
    s += fmt::format(
        "<text class=\"ytick\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#555\">{}</text>\n",
        num(kLeft - 6), num(y + 4), tick_label(t, ystep));
  }
  const double base = kTop + kPlotH;
  for (const auto& [xp, text] : xticks) {
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", num(xp),
                     num(xp), num(base), num(base + 4));
    s += fmt::format(
        "<text class=\"xtick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
        num(xp), num(base + 16), escape_html(text));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
                   num(kLeft + kPlotW / 2), num(base + 36), escape_html(c.x_title));
  s += fmt::format(
      "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 {0} "
      "{1})\">{2}</text>\n",
      num(16), num(kTop + kPlotH / 2), escape_html(c.y_title));
  // Series: a polyline per run of consecutive valid points, a filled marker per valid point.
  for (const std::string& label : c.series) {
    const char* color = kColors[c.color.at(label) % std::size(kColors)];
    std::vector<std::vector<std::pair<double, double>>> runs(1);
    for (std::size_t i = 0; i < n; ++i) {
      auto it = c.value.find({i, label});
      if (it == c.value.end()) {
        if (!runs.back().empty()) runs.emplace_back();
        continue;
      }
      runs.back().emplace_back(px[i], py(it->second));
    }
    for (const auto& run : runs) {
      if (run.empty()) continue;
      std::string points;
      for (const auto& [a, b] : run)
        points.append(points.empty() ? "" : " ").append(num(a)).append(",").append(num(b));
      s += fmt::format(
          "<polyline class=\"series\" data-label=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"2\"/>\n",
          escape_html(label), points, color);
    }
    for (std::size_t i = 0; i < n; ++i) {
      auto it = c.value.find({i, label});
      if (it == c.value.end()) continue;
      s += fmt::format(
          "<circle class=\"point\" data-label=\"{}\" data-x=\"{}\" data-y=\"{:.17g}\" cx=\"{}\" "
          "cy=\"{}\" r=\"3.5\" "
          "fill=\"{}\"><title>{} at {}: {:.6g}</title></circle>\n",
          escape_html(label), escape_html(x.labels[i]), it->second, num(px[i]), num(py(it->second)),
          color, escape_html(label), escape_html(x.labels[i]), it->second);
    }
  }
  // Hollow markers in the strip, side by side when several series miss the same x.
  const double ns = static_cast<double>(c.series.size());
  for (const Missing& m : c.missing) {
    auto pos = std::find(c.series.begin(), c.series.end(), m.label);
    if (pos == c.series.end()) continue;
    double offset = (static_cast<double>(pos - c.series.begin()) - (ns - 1) / 2) * 9;
    s += fmt::format(
        "<circle class=\"missing\" data-label=\"{}\" data-x=\"{}\" cx=\"{}\" cy=\"{}\" r=\"4\" "
        "fill=\"#fff\" "
        "stroke=\"{}\" stroke-width=\"1.5\"><title>{} at {}: {}</title></circle>\n",
        escape_html(m.label), escape_html(x.labels[m.x]), num(px[m.x] + offset),
        num(kStripTop + kStripH / 2), kColors[c.color.at(m.label) % std::size(kColors)],
        escape_html(m.label), escape_html(x.labels[m.x]), escape_html(m.reason));
  }
  // Legend.
  double ly = kTop + 6;
  for (const std::string& label : c.series) {
    const char* color = kColors[c.color.at(label) % std::size(kColors)];
    s += fmt::format(
        "<g class=\"legend-entry\" data-label=\"{0}\"><line x1=\"{1}\" x2=\"{2}\" y1=\"{3}\" "
        "y2=\"{3}\" stroke=\"{4}\" "
        "stroke-width=\"2\"/><circle cx=\"{5}\" cy=\"{3}\" r=\"3.5\" fill=\"{4}\"/><text x=\"{6}\" "
        "y=\"{7}\">{0}</text></g>\n",
        escape_html(label), num(kLegendX), num(kLegendX + 24), num(ly), color, num(kLegendX + 12),
        num(kLegendX + 30), num(ly + 4));
    ly += 18;
  }
  s += fmt::format(
      "<g class=\"legend-hollow\"><circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#fff\" "
      "stroke=\"#555\" stroke-width=\"1.5\"/>"
      "<text x=\"{}\" y=\"{}\">no value (listed below)</text></g>\n",
      num(kLegendX + 12), num(ly), num(kLegendX + 30), num(ly + 4));
  s += "</svg>\n";
  if (!c.missing.empty()) {
    s += "<ul class=\"missing-list\">\n";
    for (const Missing& m : c.missing) {
      s += fmt::format("<li class=\"missing\" data-label=\"{}\">{} at {} = {}: {}</li>\n",
                       escape_html(m.label),
                       m.label.empty() ? "every schedule" : escape_html(m.label),
                       escape_html(c.x_title), escape_html(x.labels[m.x]), escape_html(m.reason));
    }
    s += "</ul>\n";
  }
  return s;
}

std::string reason_for(const Row& row, const std::string& metric) {
  if (row.status == "out_of_memory") return "out of memory";
  if (row.status == "invalid") return "invalid scenario: " + row.error;
  if (row.status != "ok") return row.status;
  return "no value of " + metric;
}

}  // namespace

std::vector<std::string> sweep_plot_metrics() {
  std::vector<std::string> columns = report_columns();
  auto status = std::find(columns.begin(), columns.end(), "status");
  return {status + 1, columns.end()};
}

void check_sweep_plot_metric(const std::string& metric) {
  std::vector<std::string> allowed = sweep_plot_metrics();
  if (std::find(allowed.begin(), allowed.end(), metric) != allowed.end()) return;
  std::string hint = closest_match(metric, allowed);
  throw InputError(fmt::format(
      "--plot-metric: '{}' is not a numeric column of the sweep CSV{}; allowed: {}", metric,
      hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), fmt::join(allowed, ", ")));
}

std::string render_sweep_plot(std::string_view csv, const std::string& metric,
                              const std::string& file) {
  check_sweep_plot_metric(metric);
  // Comment lines before the header (the sweep's fingerprint) are not records.
  while (!csv.empty() && csv.front() == '#')
    csv.remove_prefix(std::min(csv.size(), csv.find('\n') + 1));
  std::vector<std::vector<std::string>> records = parse_csv(csv, file);
  const std::vector<std::string> report = report_columns();
  if (records.empty() || records.front().size() < 3 + report.size() ||
      records.front()[0] != "point" || records.front()[1] != "entry" ||
      records.front().back() != "error") {
    throw InputError(
        fmt::format("{}: not a sweep CSV (its header is not point,entry,<axes>,{},error)", file,
                    fmt::join(report, ",")));
  }
  const std::vector<std::string>& header = records.front();
  const std::size_t axes = header.size() - 3 - report.size();
  auto column = [&](const std::string& name) {
    auto it = std::find(report.begin(), report.end(), name);
    return 2 + axes + static_cast<std::size_t>(it - report.begin());
  };
  const std::size_t c_scenario = column("scenario"), c_label = column("label"),
                    c_status = column("status"), c_value = column(metric),
                    c_error = header.size() - 1;

  // Group the rows: chart (the other axes' values), x (the first axis' value), label.
  std::vector<std::vector<std::string>> charts;
  std::vector<std::string> x_labels, labels;
  std::map<std::tuple<std::size_t, std::size_t, std::string>, Row> cells;
  std::map<std::pair<std::size_t, std::size_t>, std::string> invalid_points;  // (chart, x) -> error
  std::string scenario;
  auto index_of = [](auto& list, const auto& value) {
    auto it = std::find(list.begin(), list.end(), value);
    if (it != list.end()) return static_cast<std::size_t>(it - list.begin());
    list.push_back(value);
    return list.size() - 1;
  };
  for (std::size_t r = 1; r < records.size(); ++r) {
    const std::vector<std::string>& f = records[r];
    if (f.size() != header.size()) {
      throw InputError(fmt::format("{}: record {} has {} fields, the header {}", file, r + 1,
                                   f.size(), header.size()));
    }
    if (scenario.empty()) scenario = f[c_scenario];
    std::size_t chart = index_of(
        charts, std::vector<std::string>(f.begin() + 2 + std::min<std::size_t>(axes, 1),
                                         f.begin() + 2 + static_cast<std::ptrdiff_t>(axes)));
    std::size_t x = index_of(x_labels, axes > 0 ? f[2] : std::string());
    Row row{f[c_label], f[c_status], f[c_value], f[c_error]};
    if (row.label.empty()) {
      invalid_points.emplace(std::pair{chart, x}, row.error);
      continue;
    }
    index_of(labels, row.label);
    cells.emplace(std::tuple{chart, x, row.label}, std::move(row));
  }

  XAxis x_axis = make_x_axis(x_labels);
  const std::string x_title = axes > 0 ? header[2] : "";
  std::map<std::string, std::size_t> color;
  for (std::size_t i = 0; i < labels.size(); ++i) color[labels[i]] = i;

  std::string title = "bubblesim sweep: " + (scenario.empty() ? file : scenario);
  std::string body;
  for (std::size_t ch = 0; ch < charts.size(); ++ch) {
    ChartInput in;
    in.x = &x_axis;
    in.x_title = x_title;
    in.y_title = metric;
    in.color = color;
    std::vector<std::string> parts;
    for (std::size_t a = 1; a < axes; ++a)
      parts.push_back(header[2 + a] + " = " + charts[ch][a - 1]);
    in.title =
        parts.empty() ? metric + " vs " + x_title : fmt::format("{}", fmt::join(parts, ", "));
    for (const std::string& label : labels) {
      for (std::size_t x = 0; x < x_labels.size(); ++x) {
        if (cells.count({ch, x, label}) != 0) {
          in.series.push_back(label);
          break;
        }
      }
    }
    for (std::size_t x = 0; x < x_labels.size(); ++x) {
      auto invalid = invalid_points.find({ch, x});
      if (in.series.empty() && invalid != invalid_points.end()) {
        in.missing.push_back({x, "", "invalid scenario: " + invalid->second});
      }
      for (const std::string& label : in.series) {
        auto it = cells.find({ch, x, label});
        if (it == cells.end()) {
          in.missing.push_back({x, label,
                                invalid != invalid_points.end()
                                    ? "invalid scenario: " + invalid->second
                                    : "absent (the schedule did not run at this point)"});
          continue;
        }
        std::optional<double> v =
            it->second.status == "ok" ? parse_number(it->second.value) : std::nullopt;
        if (v) {
          in.value[{x, label}] = *v;
        } else {
          in.missing.push_back({x, label, reason_for(it->second, metric)});
        }
      }
    }
    body += fmt::format("<h2>{}</h2>\n", escape_html(in.title));
    body += render_chart(in, ch);
  }
  if (charts.empty()) body = "<p class=\"none\">the CSV holds no rows</p>\n";

  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         escape_html(title) + "</title>\n<style>" + std::string(kStyle) +
         "</style>\n</head>\n<body>\n<h1>" + escape_html(title) + "</h1>\n" +
         fmt::format(
             "<p>y: {}; x: {}; {} chart(s), {} schedule(s). Filled markers are valid points; "
             "hollow markers in "
             "the red strip are points without a value (out of memory, invalid, skipped), listed "
             "under each "
             "chart.</p>\n",
             escape_html(metric), escape_html(x_title.empty() ? "(no axis)" : x_title),
             charts.size(), labels.size()) +
         body + "</body>\n</html>\n";
}

}  // namespace bubblesim
