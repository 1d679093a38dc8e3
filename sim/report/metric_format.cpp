#include "sim/report/metric_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace bubblesim {
namespace {

constexpr int kTimeDigits = 5;  // significant digits of a table's largest time

double largest_magnitude(const std::vector<double>& values) {
  double most = 0.0;
  for (double v : values)
    if (std::isfinite(v)) most = std::max(most, std::fabs(v));
  return most;
}

}  // namespace

std::string Scale::write(double value) const {
  std::string text = fmt::format("{:.{}f}", value * per_unit, decimals);
  // No "-0.00": a value that rounds to zero is written as zero.
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

Scale time_scale(const std::vector<double>& seconds) {
  struct Unit {
    const char* suffix;
    double per_second;
  };
  static constexpr std::array kUnits{Unit{"s", 1.0}, Unit{"ms", 1e3}, Unit{"us", 1e6},
                                     Unit{"ns", 1e9}};
  const double most = largest_magnitude(seconds);
  if (most == 0.0) return Scale{"ms", 1e3, 0};
  Unit unit = kUnits.back();
  for (const Unit& u : kUnits) {
    if (most * u.per_second >= 1.0) {
      unit = u;
      break;
    }
  }
  const int integer_digits =
      std::max(1, static_cast<int>(std::floor(std::log10(most * unit.per_second))) + 1);
  return Scale{unit.suffix, unit.per_second, std::max(0, kTimeDigits - integer_digits)};
}

Scale byte_scale(const std::vector<double>& bytes) {
  static constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const double most = largest_magnitude(bytes);
  std::size_t i = 0;
  while (i + 1 < kUnits.size() && most >= std::ldexp(1.0, 10 * static_cast<int>(i + 1))) ++i;
  return Scale{kUnits[i], std::ldexp(1.0, -10 * static_cast<int>(i)), i == 0 ? 0 : 2};
}

std::string format_metric(MetricUnit unit, double value) {
  switch (unit) {
    case MetricUnit::Seconds: {
      Scale s = time_scale({value});
      return s.write(value) + " " + s.suffix;
    }
    case MetricUnit::Bytes: {
      Scale s = byte_scale({value});
      return s.write(value) + " " + s.suffix;
    }
    case MetricUnit::Ratio:
      return fmt::format("{:.4f}", value);
    case MetricUnit::ActivationUnits:
      return fmt::format("{:.2f}", value);
    case MetricUnit::Count:
      return fmt::format("{:.0f}", value);
    case MetricUnit::SamplesPerSecond:
      return fmt::format("{:.4g} samples/s", value);
    case MetricUnit::TokensPerSecond:
      return fmt::format("{:.0f} tokens/s", value);
    case MetricUnit::TeraflopsPerSecond:
      return fmt::format("{:.1f} TFLOP/s", value);
    case MetricUnit::GpuHours:
      return fmt::format("{:.0f} GPU-hours", value);
  }
  return fmt::format("{}", value);
}

CellText write_cells(const std::vector<std::string>& headings,
                     const std::vector<std::vector<Cell>>& rows) {
  std::vector<double> times;
  for (const auto& row : rows)
    for (const Cell& c : row)
      if (c.unit == MetricUnit::Seconds) times.push_back(c.value);
  const Scale times_scale = time_scale(times);
  CellText out{headings, std::vector<std::vector<std::string>>(rows.size())};
  for (std::size_t col = 0; col < headings.size(); ++col) {
    std::optional<MetricUnit> unit;
    bool one_unit = true;
    std::vector<double> values;
    for (const auto& row : rows) {
      if (col >= row.size() || !row[col].unit) continue;
      if (unit && *unit != *row[col].unit) one_unit = false;
      unit = row[col].unit;
      values.push_back(row[col].value);
    }
    std::optional<Scale> scale;
    if (unit == MetricUnit::Seconds) scale = times_scale;
    if (unit == MetricUnit::Bytes) scale = byte_scale(values);
    if (scale && one_unit && !headings[col].empty()) out.headings[col] += " " + scale->suffix;
    if (unit == MetricUnit::ActivationUnits && one_unit) out.headings[col] += " (units)";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (col >= rows[r].size()) continue;
      const Cell& c = rows[r][col];
      std::string text = c.content;
      if (c.unit == MetricUnit::Seconds) text = times_scale.write(c.value);
      if (c.unit == MetricUnit::Bytes)
        text = one_unit ? scale->write(c.value) : format_metric(*c.unit, c.value);
      if (c.unit && *c.unit != MetricUnit::Seconds && *c.unit != MetricUnit::Bytes)
        text = format_metric(*c.unit, c.value);
      out.rows[r].push_back(text);
    }
  }
  return out;
}

namespace {

/// One cell per run and metric: a per-device metric is shown by its largest value.
std::vector<std::vector<Cell>> metric_cells(const std::vector<const Metric*>& metrics,
                                            const Scenario& scenario,
                                            const std::vector<const ScheduleRun*>& runs) {
  std::vector<std::vector<Cell>> rows(runs.size());
  for (const Metric* m : metrics) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      MetricValue v = metric_value(*m, scenario, *runs[r]);
      std::optional<double> shown = v.number;
      if (m->shape == MetricShape::PerDevice && !v.per_device.empty())
        shown = *std::max_element(v.per_device.begin(), v.per_device.end());
      rows[r].push_back(shown ? Cell::of(m->unit, *shown) : Cell::text("-"));
    }
  }
  return rows;
}

}  // namespace

MetricColumns metric_columns(const std::vector<const Metric*>& metrics, const Scenario& scenario,
                             const std::vector<const ScheduleRun*>& runs) {
  std::vector<std::string> headings;
  for (const Metric* m : metrics) headings.emplace_back(m->column);
  CellText text = write_cells(headings, metric_cells(metrics, scenario, runs));
  return MetricColumns{text.headings, text.rows};
}

MetricColumns metric_columns(const std::vector<const Metric*>& metrics,
                             const std::vector<std::string>& headings, const Scenario& scenario,
                             const std::vector<const ScheduleRun*>& runs) {
  const std::vector<std::vector<Cell>> all = metric_cells(metrics, scenario, runs);
  std::vector<std::string> kept_headings;
  std::vector<std::vector<Cell>> kept(runs.size());
  for (std::size_t col = 0; col < metrics.size(); ++col) {
    const bool shown = std::any_of(all.begin(), all.end(), [col](const std::vector<Cell>& row) {
      return row[col].unit.has_value() && row[col].value != 0.0;
    });
    if (!shown) continue;
    kept_headings.push_back(headings[col]);
    for (std::size_t r = 0; r < runs.size(); ++r) kept[r].push_back(all[r][col]);
  }
  CellText text = write_cells(kept_headings, kept);
  return MetricColumns{text.headings, text.rows};
}

std::vector<const Metric*> column_metrics(MetricLevel level) {
  std::vector<const Metric*> out;
  for (const Metric* m : metrics_of_level(level))
    if (!m->column.empty()) out.push_back(m);
  return out;
}

}  // namespace bubblesim
