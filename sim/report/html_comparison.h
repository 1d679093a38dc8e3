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

#include "sim/report/verdict.h"

namespace bubblesim {

struct ComparisonRow {
  std::string label;
  double total_s = 0;  // the iteration time (the parts below sum to it)
  double compute_s = 0, bubble_s = 0, imbalance_s = 0, p2p_s = 0, collectives_s = 0, a2a_s = 0;
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
