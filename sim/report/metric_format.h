#pragma once
// How metric values are written for people (text, Markdown, HTML, regress): times in one unit per
// table with a fixed number of significant digits, bytes in binary units, ratios with 4 decimals.
// Machine-readable outputs (JSON, CSV) write the raw numbers instead.

#include <optional>
#include <string>
#include <vector>

#include "sim/report/metric_table.h"

namespace bubblesim {

/// A unit to write a group of values in: "ms" with 1000 per second and 2 decimals, "GiB" with
/// 2^-30 per byte and 2 decimals.
struct Scale {
  std::string suffix;
  double per_unit = 1.0;  // multiply a value in seconds (bytes) by this
  int decimals = 0;
  std::string write(double value) const;
};

/// Times: the largest of s, ms, us, ns in which the largest value is at least 1, with decimals
/// that give it 5 significant digits (all zero: ms). 1.4325 s and 1.2 ms -> "1.4325", "0.0012".
Scale time_scale(const std::vector<double>& seconds);
/// Bytes: the largest binary unit (B, KiB, ... PiB) in which the largest value is at least 1,
/// 2 decimals (none for B).
Scale byte_scale(const std::vector<double>& bytes);

/// One value alone, with its own scale and unit: "1.4325 s", "6.24 GiB", "0.2431".
std::string format_metric(MetricUnit unit, double value);

/// A cell of a table written for people: text as it is, or a quantity written in the unit of
/// its table (times) or column (bytes).
struct Cell {
  static Cell text(std::string s) { return Cell{std::nullopt, std::move(s), 0.0}; }
  static Cell seconds(double s) { return Cell{MetricUnit::Seconds, {}, s}; }
  static Cell seconds(Time t) { return seconds(t.seconds()); }
  static Cell bytes(double b) { return Cell{MetricUnit::Bytes, {}, b}; }
  static Cell bytes(Bytes b) { return bytes(b.as_double()); }
  static Cell of(MetricUnit unit, double v) { return Cell{unit, {}, v}; }
  std::optional<MetricUnit> unit;  // none: text
  std::string content;             // the text of a text cell
  double value = 0.0;
};

/// Headings and rows as text: every time of the table in one scale, bytes in one scale per
/// column; a column of one quantity gets its unit after its heading ("makespan" -> "makespan
/// ms", "peak mem" -> "peak mem GiB").
struct CellText {
  std::vector<std::string> headings;
  std::vector<std::vector<std::string>> rows;
};
CellText write_cells(const std::vector<std::string>& headings,
                     const std::vector<std::vector<Cell>>& rows);

/// Metrics as columns of a table with one row per schedule: headings carry the unit
/// ("makespan ms", "peak mem GiB"); missing values are "-". Every time column of one call
/// shares one scale.
struct MetricColumns {
  std::vector<std::string> headings;
  std::vector<std::vector<std::string>> rows;  // rows[run][column]
};
MetricColumns metric_columns(const std::vector<const Metric*>& metrics, const Scenario& scenario,
                             const std::vector<const ScheduleRun*>& runs);
/// The same with the given headings (one per metric, without the unit) instead of the metrics'
/// own, and without the columns that are missing or zero on every run.
MetricColumns metric_columns(const std::vector<const Metric*>& metrics,
                             const std::vector<std::string>& headings, const Scenario& scenario,
                             const std::vector<const ScheduleRun*>& runs);

/// The metrics of `level` that have a column heading, in table order.
std::vector<const Metric*> column_metrics(MetricLevel level);

}  // namespace bubblesim
