#pragma once
// The scenario as resolved (defaults filled, costs after the TP split, budgets per device,
// quantities in base units), as the `scenario` object of the JSON report.

#include <nlohmann/json.hpp>

#include "sim/runner/resolve.h"

namespace bubblesim {

nlohmann::json resolved_scenario_json(const ResolvedScenario& resolved);

}  // namespace bubblesim
