#pragma once
// How a number of one schedule's report is described: its unit, which way is better, one value or
// one per device, and the value itself. The report's metric table (sim/report/metric_table.h) is
// made of these, and so are the rows an engine behaviour declares for what it measured
// (component_kind.h: ResultRow), which the metric table takes in at the place each names.

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/units/time.h"

namespace bubblesim {

struct Metrics;  // simulation_result.h

/// What one value counts. Seconds and bytes are written in a scale chosen per table in text.
enum class MetricUnit {
  Seconds,
  Bytes,
  Ratio,
  ActivationUnits,
  Count,
  SamplesPerSecond,
  TokensPerSecond,     // per GPU
  TeraflopsPerSecond,  // 1e12 FLOP/s
  GpuHours,
};
/// Which way is better; `regress` judges only metrics with a direction.
enum class MetricDirection { LowerIsBetter, HigherIsBetter, Informational };
/// One number per schedule, or one per device (summarised in `regress` by a scalar metric).
enum class MetricShape { Scalar, PerDevice };

/// One schedule's value of a metric: `number` for a scalar (none: not measured, or no closed
/// form), `per_device` for a per-device metric.
struct MetricValue {
  std::optional<double> number;
  std::vector<double> per_device;
};

/// The largest of a per-device time, in seconds (0 without devices): "the device with the most",
/// as the behaviours' rows give it.
inline MetricValue largest_seconds(const std::vector<Time>& per_device) {
  Time most;
  for (Time t : per_device) most = std::max(most, t);
  return MetricValue{most.seconds(), {}};
}

/// A number an engine behaviour reports about the simulation: a row of the metric table at the
/// simulation level, under `key` ("blocked_send_s"), read from the replay's metrics (the
/// behaviour's own record in Metrics::components).
struct ResultRow {
  std::string_view key;
  MetricUnit unit = MetricUnit::Seconds;
  MetricDirection direction = MetricDirection::Informational;
  MetricShape shape = MetricShape::Scalar;
  std::string_view help;  // one line: what it measures
  MetricValue (*get)(const Metrics& simulation) = nullptr;
  /// Its column heading in the behaviour's report section ("blocked send"); empty: not there.
  std::string_view heading;
};

/// A small table of its own in the text, Markdown and HTML reports, for numbers only some
/// scenarios produce (the rows of every behaviour that names it, in registration order). Its
/// columns are left out where every run has none or zero, the table where no column is left.
struct ResultSection {
  std::string_view name;   // its first column's heading and its identity ("p2p")
  std::string_view title;  // what it is
  /// The section it follows (report_rows.cpp's own, or another behaviour's); empty: the end.
  std::string_view after;
};

}  // namespace bubblesim
