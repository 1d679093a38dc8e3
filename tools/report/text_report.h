#pragma once
// Human-readable reports: one table per abstraction level and the ranking changes between them.

#include <string>
#include <string_view>

#include "tools/runner/scenario_runner.h"

namespace bubblesim {

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result);
/// The `faults:` section of the text report: what applied and each schedule's makespan with and
/// without the faults.
std::string faults_text(const Scenario& scenario, const ScenarioRun& result);

/// Markdown for a CI job summary: the three levels as Markdown tables, failures, skipped
/// schedules and the ranking changes between levels.
std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result);

/// CSV: a header, then one row per scenario and schedule: scenario, schedule, label, status and
/// every scalar metric of the metric table (tools/report/metric_table.h) in table order, so new
/// columns are only ever appended.
std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result);
/// The CSV header line (with newline) and one row (with newline) of scenario_report_csv.
std::string csv_report_header();
std::string csv_report_row(const Scenario& scenario, const ScheduleRun& run);
/// The cells of a row for a point that produced no run (an invalid sweep point): every column of
/// csv_report_header empty except `status`; no newline.
std::string csv_report_cells_without_run(std::string_view status);
/// Quotes a CSV field when it holds a comma, a quote or a newline.
std::string csv_quote(const std::string& field);

}  // namespace bubblesim
