#pragma once
// Reports of a scenario run for people (text for a terminal, Markdown for a CI summary) and for
// spreadsheets (CSV). Text and Markdown open with the verdict (sim/report/verdict.h), then one
// table per abstraction level; the text form fits ReportOptions::width.

#include <string>
#include <string_view>

#include "sim/report/report_options.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// Text: the verdict, the formula / table / simulation tables (closed-form notes as footnotes),
/// and in the run form the details (sync, memory, faults, failures, ranking changes). No line is
/// longer than `options.width` unless one word is.
std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result,
                                 const ReportOptions& options = {});
/// The `faults:` section of the text report: what applied and each schedule's makespan with and
/// without the faults.
std::string faults_text(const Scenario& scenario, const ScenarioRun& result,
                        std::size_t width = 100);

/// Markdown for a CI job summary: the verdict, the three levels as Markdown tables, failures,
/// skipped schedules and the ranking changes between levels.
std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result,
                                     const ReportOptions& options = {});

/// CSV: a header, then one row per scenario and schedule: scenario, schedule, label, status and
/// every scalar metric of the metric table (sim/report/metric_table.h) in table order, so new
/// columns are only ever appended. Infeasible schedules have a row with status `infeasible`.
std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result);
/// The CSV header line (with newline) and one row (with newline) of scenario_report_csv.
std::string csv_report_header();
std::string csv_report_row(const Scenario& scenario, const ScheduleRun& run);
std::string csv_report_infeasible_row(const Scenario& scenario, const InfeasibleSchedule& s);
/// The cells of a row for a point that produced no run (an invalid sweep point): every column of
/// csv_report_header empty except `status`; no newline.
std::string csv_report_cells_without_run(std::string_view status);
/// Quotes a CSV field when it holds a comma, a quote or a newline; its other control characters
/// (ESC, BEL, CR) are written as \xHH (visible_controls).
std::string csv_quote(const std::string& field);

}  // namespace bubblesim
