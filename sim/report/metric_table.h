#pragma once
// The metric table: every number the reports give about one schedule, declared once with its
// name, unit, direction (lower is better, higher is better, informational), level (formula, table,
// simulation) and getter. The text, Markdown, CSV, JSON and HTML reports, the sweep CSV and
// `regress` all walk this table: adding a metric is one entry in metric_table.cpp plus its
// computation. The engine's behaviours add their own rows (sim/engine/component_kind.h:
// ComponentKind::rows), each where the behaviour says.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/metric_row.h"
#include "sim/runner/schedule_run.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

/// The abstraction level a metric describes (sim/runner/schedule_run.h).
enum class MetricLevel { Formula, Table, Simulation };
// MetricUnit, MetricDirection, MetricShape and MetricValue: sim/engine/metric_row.h (the engine's
// behaviours declare rows of this table with them).

/// What a getter reads: the scenario and one schedule's run.
struct MetricInput {
  const Scenario& scenario;
  const ScheduleRun& run;
  const Metrics& ideal() const { return run.ideal.metrics; }
  const Metrics& sim() const { return run.simulation.metrics; }
  /// The Monte Carlo samples with `variability:` (docs/variability.md), else null.
  const MonteCarloResult* mc() const { return run.monte_carlo ? &*run.monte_carlo : nullptr; }
};

struct Metric {
  std::string_view key;  // its key in the level's JSON object, e.g. "makespan_s"
  MetricLevel level;
  MetricUnit unit;
  MetricDirection direction;
  MetricShape shape;
  /// Column heading in the text, Markdown and HTML tables, without the unit ("makespan");
  /// empty: the metric is only in the JSON and CSV reports and `regress`.
  std::string_view column;
  std::string_view help;  // one line: what it measures
  std::function<MetricValue(const MetricInput&)> get;

  /// "simulation.makespan_s": the name `regress`, `--only` and the docs use.
  std::string name() const;
  /// The CSV column: the key for the simulation level, else "level_key" ("table_makespan_s").
  std::string csv_column() const;
};

/// Every metric, in CSV column order (new metrics are appended so CSV columns stay stable).
const std::vector<Metric>& metric_table();
/// The metric named `name` ("simulation.makespan_s"), or nullptr.
const Metric* find_metric(std::string_view name);

/// With variability (docs/variability.md), a simulation metric that is a Monte Carlo estimate
/// (a mean or a quantile over the samples) has a sampling error; `regress` widens its tolerance
/// by it. This names the standard deviation metric it is estimated from, and the factor k that
/// makes k * sd / sqrt(samples) its standard error: 1 for a mean, and for a quantile q the normal
/// approximation sqrt(q (1 - q)) / phi(Phi^-1(q)) (1.2533 for the median, 2.1131 for p95).
struct SamplingError {
  const Metric* sd = nullptr;
  double factor = 0.0;
};
std::optional<SamplingError> sampling_error_of(const Metric& metric);
/// The metric giving the number of Monte Carlo samples (simulation.samples).
const Metric& samples_metric();
/// The metrics of one level, in table order.
std::vector<const Metric*> metrics_of_level(MetricLevel level);
/// The metric's value for one schedule.
MetricValue metric_value(const Metric& metric, const Scenario& scenario, const ScheduleRun& run);

std::string_view metric_level_name(MetricLevel level);  // "formula", "table", "simulation"
/// Short unit as in headings and benchmark JSON: "s", "bytes", "ratio", "activation units", ...
std::string_view metric_unit_name(MetricUnit unit);
/// "lower is better", "higher is better", "informational".
std::string_view metric_direction_name(MetricDirection direction);

}  // namespace bubblesim
