#pragma once
// Human-readable reports: one table per abstraction level and the ranking changes between them.

#include <string>

#include "tools/runner/scenario_runner.h"

namespace bubblesim {

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result);
/// The `faults:` section of the text report: what applied and each schedule's makespan with and
/// without the faults.
std::string faults_text(const Scenario& scenario, const ScenarioRun& result);

/// Markdown for a CI job summary: the three levels as Markdown tables, failures, skipped
/// schedules and the ranking changes between levels.
std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result);

/// CSV: one row per scenario and schedule (stable columns, header first; new columns are only
/// ever appended). One row per schedule with the main metrics of the three levels (header first).
std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result);
/// The CSV header line (with newline) and one row (with newline) of scenario_report_csv.
std::string csv_report_header();
std::string csv_report_row(const Scenario& scenario, const ScheduleRun& run);
/// Quotes a CSV field when it holds a comma, a quote or a newline.
std::string csv_quote(const std::string& field);

}  // namespace bubblesim
