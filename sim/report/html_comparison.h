#pragma once
// The comparison chart of the HTML reports (docs/outputs.md): one row per schedule (a run's
// report) or per layout (`bubblesim plan`), side by side on one scale, static SVG that needs no
// script. Left: the iteration time split into compute, bubble, imbalance and the exposed
// communication (p2p, collectives, all-to-all), the shades of the idle split
// (idle_split_report.h); right: the peak memory against the budget (red past it). Each bar part
// is a <rect class="cmp-part" data-part="..."> and each row a <g class="cmp-row">, so a browser
// test can count them.

#include <string>
#include <vector>

#include "sim/report/idle_split_report.h"
#include "sim/report/verdict.h"

namespace bubblesim {

/// A bar: the parts (IterationParts) sum to total_s.
struct ComparisonRow : IterationParts {
  std::string label;
  double total_s = 0;  // the iteration time
  double peak_memory_bytes = 0;
  double budget_bytes = 0;  // 0: none
  std::string note;         // after the time, e.g. "1148 tokens/s/GPU"
};

/// The chart with its legend; "" without rows.
std::string comparison_chart_html(const std::vector<ComparisonRow>& rows,
                                  const std::string& caption);

/// The verdict's ranked schedules as rows: the simulated iteration time (else makespan) split
/// by the idle split's shares of devices x makespan, and the largest device's peak memory.
std::vector<ComparisonRow> comparison_rows(const Scenario& scenario, const Verdict& verdict);

}  // namespace bubblesim
