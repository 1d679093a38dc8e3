// The Markdown of `regress` (regression.h: regression_markdown): the verdict line, the roll-up
// per schedule and the changed metrics, every string from the two reports through the Markdown
// rule (markdown_escape.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "sim/report/markdown_escape.h"
#include "sim/report/metric_format.h"
#include "sim/report/regression.h"

namespace bubblesim {
namespace {

/// A tolerance or a number of sigmas as the summary line writes it.
std::string significant(double v) { return fmt::format("{:.6g}", v); }

/// Relative change in percent; none when the baseline is zero.
std::optional<double> change_percent(const MetricComparison& m) {
  if (m.baseline == 0) return std::nullopt;
  return (m.current - m.baseline) / std::abs(m.baseline) * 100.0;
}

/// Per schedule: regressions, improvements and the worst change (the largest relative worsening
/// among its regressions), in baseline order.
std::string rollup_markdown(const RegressionReport& report) {
  struct Rollup {
    std::size_t regressions = 0, improvements = 0;
    const MetricComparison* worst = nullptr;
  };
  std::vector<std::string> order;
  std::map<std::string, Rollup> by_schedule;
  for (const MetricComparison& m : report.metrics) {
    if (!by_schedule.count(m.schedule)) order.push_back(m.schedule);
    Rollup& r = by_schedule[m.schedule];
    r.improvements += m.improvement ? 1 : 0;
    if (!m.regression) continue;
    ++r.regressions;
    auto size = [](const MetricComparison& c) {
      return std::fabs(change_percent(c).value_or(1e300));
    };
    if (r.worst == nullptr || size(m) > size(*r.worst)) r.worst = &m;
  }
  std::string rows;
  for (const std::string& label : order) {
    const Rollup& r = by_schedule[label];
    if (r.regressions == 0 && r.improvements == 0) continue;
    std::string worst = "-";
    if (r.worst != nullptr) {
      std::optional<double> pct = change_percent(*r.worst);
      worst = fmt::format("{} {}", r.worst->metric,
                          pct ? fmt::format("{:+.2f}%", *pct) : std::string("new nonzero"));
    }
    rows += fmt::format("| {} | {} | {} | {} |\n", markdown_text(label), r.regressions,
                        r.improvements, markdown_text(worst));
  }
  if (rows.empty()) return "";
  return "| schedule | regressions | improvements | worst change |\n|---|---:|---:|---|\n" + rows +
         "\n";
}

}  // namespace

std::string regression_markdown(const RegressionReport& report) {
  std::size_t regressions = 0, improvements = 0;
  for (const MetricComparison& m : report.metrics) {
    regressions += m.regression ? 1 : 0;
    improvements += m.improvement ? 1 : 0;
  }
  std::string out =
      report.regressed()
          ? fmt::format(
                "## :x: bubblesim regression check: {} metric regressions, {} status changes, {} "
                "missing schedules (tolerance {}%)\n\n",
                regressions + report.lost.size(), report.status_changes.size(),
                report.missing.size(), significant(report.tolerance * 100))
          : fmt::format(
                "## :white_check_mark: bubblesim regression check: no regression (tolerance "
                "{}%, {} metrics compared, {} improved)\n\n",
                significant(report.tolerance * 100), report.metrics.size(), improvements);
  if (!report.scenario_differences.empty()) {
    const std::size_t shown = std::min<std::size_t>(report.scenario_differences.size(), 12);
    std::vector<std::string> keys(
        report.scenario_differences.begin(),
        report.scenario_differences.begin() + static_cast<std::ptrdiff_t>(shown));
    out += fmt::format(
        "**Warning: the two reports are of different scenarios**; their resolved scenarios differ "
        "in {}{}.\n\n",
        markdown_text(fmt::format("{}", fmt::join(keys, ", "))),
        shown < report.scenario_differences.size()
            ? fmt::format(" and {} more keys", report.scenario_differences.size() - shown)
            : std::string());
  }
  out += rollup_markdown(report);
  std::string rows;
  std::size_t informational = 0;
  const bool sampled = std::any_of(report.metrics.begin(), report.metrics.end(),
                                   [](const MetricComparison& m) { return m.sampling_error > 0; });
  std::size_t other_samples = 0, other_peak = 0;
  for (const MetricComparison& m : report.metrics) {
    if (m.current == m.baseline) continue;
    if (m.other_peak) {
      ++other_peak;
      continue;
    }
    if (m.other_samples) {
      ++other_samples;
      continue;
    }
    if (m.definition->direction == MetricDirection::Informational) {
      ++informational;
      continue;
    }
    const std::optional<double> change = change_percent(m);
    std::string verdict = m.regression    ? "regression"
                          : m.improvement ? "improvement"
                                          : "within tolerance";
    std::string pct = change ? fmt::format("{:+.3f}%", *change) : "new nonzero";
    std::string error;
    if (sampled) {
      error = m.sampling_error > 0
                  ? fmt::format(" {} |", format_metric(m.definition->unit, m.sampling_error))
                  : std::string(" - |");
    }
    rows += fmt::format("| {} | {} | {} | {} | {} |{} {} |\n", markdown_text(m.schedule),
                        markdown_text(m.metric), format_metric(m.definition->unit, m.baseline),
                        format_metric(m.definition->unit, m.current), pct, error, verdict);
  }
  if (!rows.empty()) {
    out += sampled ? "| schedule | metric | baseline | current | change | sampling error | "
                     "verdict |\n|---|---|---:|---:|---:|---:|---|\n"
                   : "| schedule | metric | baseline | current | change | verdict "
                     "|\n|---|---|---:|---:|---:|---|\n";
    out += rows + "\n";
    if (sampled) {
      out += fmt::format(
          "Monte Carlo estimates (variability) are judged beyond the tolerance plus {} sampling "
          "errors of the difference.\n\n",
          significant(kSamplingSigmas));
    }
  } else if (informational == 0 && other_samples == 0 && other_peak == 0 &&
             report.unjudged_changes == 0) {
    out += "Every compared metric is unchanged.\n\n";
  }
  if (report.unjudged_changes > 0) {
    out += fmt::format(
        "{} other metric{} changed (not judged: the headline metrics are the iteration time, or "
        "the makespan, and the peak memory; `--all` judges and lists every metric).\n\n",
        report.unjudged_changes, report.unjudged_changes == 1 ? "" : "s");
  }
  if (other_samples > 0) {
    out += fmt::format(
        "{} simulation metric{} of the median Monte Carlo sample changed (not judged: the reports "
        "drew different samples, a different variability seed or count).\n\n",
        other_samples, other_samples == 1 ? "" : "s");
  }
  if (other_peak > 0) {
    out += fmt::format(
        "{} MFU value{} changed (not judged: the reports' GPU peaks differ, and each MFU is "
        "against its own peak, so a slower GPU reads higher; compare tokens/s and TFLOP/s).\n\n",
        other_peak, other_peak == 1 ? "" : "s");
  }
  if (informational > 0) {
    out += fmt::format(
        "{} informational metric{} changed (not judged: no better direction, e.g. the time of a "
        "peak).\n\n",
        informational, informational == 1 ? "" : "s");
  }
  for (const std::string& s : report.status_changes)
    out += fmt::format("- status change (regression): {}\n", markdown_text(s));
  for (const std::string& s : report.lost)
    out += fmt::format("- value lost in the current report (regression): {}\n", markdown_text(s));
  for (const std::string& s : report.missing)
    out += fmt::format("- missing from the current report (regression): {}\n", markdown_text(s));
  for (const std::string& s : report.added)
    out += fmt::format("- new in the current report (not compared): {}\n", markdown_text(s));
  return out;
}

}  // namespace bubblesim
