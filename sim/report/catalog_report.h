#pragma once
// What `bubblesim list` and `bubblesim explain NAME` (without a scenario) print: the known
// schedules, the metrics of the reports, and one schedule's description and parameters.

#include <string>

#include "schedules/registry.h"

namespace bubblesim {

/// A table of every registered schedule, one line each: name, placement and a one-line summary,
/// the description cut after a clause with "..." where it does not fit `width` characters (0: no
/// limit); below it the schedules from plugins with their origin ("NAME: plugin PATH (version
/// X)"), then a line pointing to `explain NAME`.
std::string schedule_list_text(const Registry& registry, std::size_t width = 100);

/// Every metric of the reports (sim/report/metric_table.h), one paragraph each: its name
/// (`simulation.makespan_s`), unit, which way is better, whether `sweep --html --plot-metric` can
/// plot it (its CSV column), then what it measures wrapped to `width`.
std::string metric_list_text(std::size_t width = 100);

/// `name`'s description, placement, source, origin and parameters (type, default, help,
/// choices). `name` must be registered.
std::string schedule_description_text(const Registry& registry, const std::string& name);

}  // namespace bubblesim
