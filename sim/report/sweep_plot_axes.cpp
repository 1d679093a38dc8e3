#include "sim/report/sweep_plot_axes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "sim/units/csv_records.h"
#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"
#include "sim/units/quantity_parser.h"

namespace bubblesim::sweep_plot_axes {

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& file) {
  std::vector<std::vector<std::string>> records;
  CsvReader reader(text);
  while (std::optional<CsvRecord> record = reader.next()) {
    if (!record->quotes_closed)
      throw InputError(fmt::format("{}:{}: a quoted CSV field is not closed", file, record->line));
    std::vector<std::string>& values = records.emplace_back();
    for (const CsvField& field : record->fields) values.emplace_back(field.value);
  }
  return records;
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// fmt prints -0.0 as "-0".
std::string fixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-') s.erase(0, 1);
  return s;
}

double nice_step(double span, double target) {
  double raw = span / target;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  double m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

namespace {

int decimals_for(double step) {
  return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
}

}  // namespace

std::string tick_label(double v, double step) {
  if (step >= 1e6 || step < 1e-4) return fmt::format("{:.3g}", v);
  return fixed(v, decimals_for(step));
}

std::vector<double> ticks(double lo, double hi, double step) {
  std::vector<double> t;
  auto first = static_cast<std::int64_t>(std::ceil(lo / step - 1e-9));
  for (std::int64_t k = first; static_cast<double>(k) * step <= hi + step * 1e-9; ++k)
    t.push_back(static_cast<double>(k) * step);
  return t;
}

XAxis make_x_axis(std::vector<std::string> labels) {
  XAxis x;
  x.labels = std::move(labels);
  auto all = [&](auto parse) -> std::optional<std::vector<double>> {
    std::vector<double> v;
    for (const std::string& l : x.labels) {
      std::optional<double> d = parse(l);
      if (!d) return std::nullopt;
      v.push_back(*d);
    }
    return v;
  };
  auto with_unit = [&](std::vector<double> base,
                       const std::vector<std::pair<double, const char*>>& units) {
    double top = 0;
    for (double b : base) top = std::max(top, std::abs(b));
    std::size_t u = 0;
    while (u + 1 < units.size() && top >= units[u + 1].first) ++u;
    for (double& b : base) b /= units[u].first;
    x.values = std::move(base);
    x.unit = units[u].second;
  };
  if (x.labels.empty()) return x;
  if (auto v = all([](const std::string& l) { return parse_number(l); })) {
    x.values = *v;
  } else if (auto b = all([](const std::string& l) -> std::optional<double> {
               try {
                 return parse_bytes(l).as_double();
               } catch (const QuantityError&) {
                 return std::nullopt;
               } catch (const OverflowError&) {
                 return std::nullopt;
               }
             })) {
    with_unit(*b, {{1, "B"},
                   {1024.0, "KiB"},
                   {1024.0 * 1024, "MiB"},
                   {1024.0 * 1024 * 1024, "GiB"},
                   {1024.0 * 1024 * 1024 * 1024, "TiB"}});
  } else if (auto t = all([](const std::string& l) -> std::optional<double> {
               try {
                 return static_cast<double>(parse_time(l).ps());
               } catch (const QuantityError&) {
                 return std::nullopt;
               } catch (const OverflowError&) {
                 return std::nullopt;
               }
             })) {
    with_unit(*t, {{1, "ps"}, {1e3, "ns"}, {1e6, "us"}, {1e9, "ms"}, {1e12, "s"}});
  }
  return x;
}

}  // namespace bubblesim::sweep_plot_axes
