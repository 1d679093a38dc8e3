#pragma once
// Human-readable reports: one table per abstraction level and the ranking changes between them.

#include <string>

#include "tools/runner/scenario_runner.h"

namespace bubblesim {

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result);

/// Markdown for a CI job summary: the three levels as Markdown tables, failures, skipped
/// schedules and the ranking changes between levels.
std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result);

/// CSV: one row per scenario and schedule (stable columns, header first; new columns are only
/// ever appended). One row per schedule with the main metrics of the three levels (header first).
std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result);

}  // namespace bubblesim
