#pragma once
// The sweep plot: one self-contained HTML page (inline SVG and CSS, no script, nothing fetched)
// drawn from a sweep's CSV (sim/sweep/sweep_runner.h), e.g. bubble vs memory budget.
//
// One line chart per combination of the values of the axes after the first; x is the first axis
// (numbers with their units, "8GiB" or "0.5ms", on a linear scale; anything else evenly spaced),
// y is one numeric column of the rows. Each schedule label is one series: a polyline through its
// valid points (status ok with a value; one polyline per run of consecutive valid points, so a
// missing point is a gap, never interpolated) with filled markers. A point that is out of memory,
// deadlocked, an invalid scenario, has no value or is absent (the schedule was skipped there) is
// a hollow marker in the "no value" strip above the plot and is listed under the chart.
//
// The page depends only on the CSV's bytes (its title is the scenario name in the rows), so the
// plot of merged shards is byte-identical to the plot of one run. Elements tests and browsers can
// find: <svg class="chart" data-chart=I>, <polyline class="series" data-label=L>, <circle
// class="point"|"missing" data-label=L data-x=X>, <g class="legend-entry" data-label=L>,
// <li class="missing" data-label=L>.

#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

/// The CSV columns a sweep plot can show: the run report's numeric columns.
std::vector<std::string> sweep_plot_metrics();

/// Throws InputError naming `metric` and the allowed columns when it is not one of them.
void check_sweep_plot_metric(const std::string& metric);

/// Renders the page from the text of a sweep CSV (`file` only names it in error messages).
/// Throws InputError when the text is not a sweep CSV.
std::string render_sweep_plot(std::string_view csv, const std::string& metric,
                              const std::string& file);

}  // namespace bubblesim
