#pragma once
// Regression check between two JSON reports of the same scenario (a CI baseline and a new run).
//
// Schedules are matched by label. By default one headline metric per schedule is judged, the
// one its verdict ranks by (simulation.iteration_time_s where the baseline has it, else
// simulation.makespan_s), plus simulation.peak_memory_bytes: one effect (an op 5% slower) is one
// flag, not one per metric derived from it. `all` judges every scalar metric of the metric table
// (sim/report/metric_table.h) once, per-device lists through their scalar summaries; without
// it the other metrics that changed are only counted. `only` judges the metrics it names.
// When the two reports' resolved scenarios differ, the differing keys are listed (a comparison of
// two different scenarios is rarely meant). A lower-is-better metric regresses when current >
// baseline * (1 + tolerance) (plus 1e-12 for rounding), a higher-is-better one when current <
// baseline * (1 - tolerance); informational metrics (the time of a peak, a span that is part of the
// makespan) are never judged. A status change away from "ok" and a schedule missing from the
// current report are regressions too.
//
// With variability (docs/variability.md) a simulation mean or quantile is a Monte Carlo estimate:
// its margin widens by kSamplingSigmas times the standard error of the difference,
// sqrt(se_baseline^2 + se_current^2), each se from the report's sd and sample count
// (sampling_error_of in metric_table.h), so a different seed alone is not a regression. The
// other simulation metrics then describe one sample (the median one): they are judged only when
// both reports drew the same samples (variability seed and samples), else listed unjudged.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/report/metric_table.h"

namespace bubblesim {

struct MetricComparison {
  std::string schedule;  // label
  std::string metric;    // e.g. "simulation.bubble_ratio"
  const Metric* definition = nullptr;
  double baseline = 0.0;
  double current = 0.0;
  bool regression = false;
  bool improvement = false;     // current < baseline * (1 - tolerance)
  double sampling_error = 0.0;  // standard error of current - baseline (0: deterministic)
  bool other_samples = false;   // a median sample's value from differently drawn samples: unjudged
  /// A fraction of the GPU's peak (MFU) whose reports have different peaks: each is against its
  /// own, so a slower GPU reads as a higher MFU; unjudged (tokens/s and TFLOP/s compare).
  bool other_peak = false;
};

/// Standard errors of the difference a Monte Carlo estimate may move without a verdict.
inline constexpr double kSamplingSigmas = 3.0;

struct RegressionReport {
  double tolerance = 0.0;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> status_changes;  // "label: ok -> deadlock"; each a regression
  std::vector<std::string> lost;  // "label: metric 1.5 -> no value" (null or absent); regressions
  std::vector<std::string> missing;  // labels in the baseline only; each a regression
  std::vector<std::string> added;    // labels in the current report only; informational
  /// Dotted keys of the resolved scenario ("pipeline.microbatches", "costs.forward_s") whose
  /// values differ between the reports; empty when they describe the same scenario.
  std::vector<std::string> scenario_differences;
  std::size_t unjudged_changes = 0;  // other metrics that changed (not judged without `all`)
  bool regressed() const;
  /// Any judged metric beyond the tolerance either way, a status change, a lost value, a
  /// missing schedule, or differing scenarios (`regress --fail-on any`).
  bool changed() const;
};

/// `regress --fail-on`: what makes the exit code 1.
enum class FailOn { Regression, Any, None };
/// "regression", "any" or "none"; InputError naming them for anything else.
FailOn parse_fail_on(const std::string& text);
/// Whether `report` fails under `fail_on`.
bool fails(const RegressionReport& report, FailOn fail_on);

/// Parses "1%", "0.5 %" or "0.01" (a fraction); throws InputError for anything else or < 0.
double parse_tolerance(const std::string& text);

/// Throws InputError (naming `baseline_name`/`current_name`) when either is not a JSON report
/// or the schema versions differ.
/// `only` (empty: the headline metrics, or every metric with `all`) limits the comparison to
/// these metrics, named LEVEL.KEY or KEY.
RegressionReport compare_reports(const nlohmann::json& baseline, const nlohmann::json& current,
                                 double tolerance, const std::string& baseline_name = "baseline",
                                 const std::string& current_name = "current",
                                 const std::vector<std::string>& only = {}, bool all = false);

/// "simulation.makespan_s,bubble_ratio" -> its names; InputError naming the known metrics for a
/// name that is not a scalar metric of the metric table.
std::vector<std::string> parse_metric_names(const std::string& text);

/// Markdown: a verdict line, a per-schedule rollup (regressions, improvements, worst change),
/// a table of every judged metric that changed (bytes and times in binary and time units), the
/// count of informational metrics that changed, status changes and missing schedules.
std::string regression_markdown(const RegressionReport& report);

/// github-action-benchmark "customSmallerIsBetter" entries for every lower-is-better metric of
/// `report`: [{name: "SCENARIO/LABEL/METRIC", unit, value}].
nlohmann::json benchmark_entries(const nlohmann::json& report);

/// Reads and parses a JSON file; InputError with the parser's message for bad JSON.
nlohmann::json read_json_file(const std::string& path);

}  // namespace bubblesim
