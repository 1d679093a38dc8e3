#pragma once
// The HTML report's mixture-of-experts view (docs/moe.md; internal to html_report.cpp): per device
// a thin two-part lane under its timeline row with the phases the Perfetto trace shows (upper: the
// op's routed-expert GEMMs and the compute its hidden all-to-all's SMs slow; lower: the
// all-to-all hidden under compute and the part left exposed), the routed experts' static memory
// as a band in each device's memory chart, and their per-stage bytes in the cost table. A report
// without MoE gets none of it: its data, script and tables stay byte for byte what they were.

#include <nlohmann/json.hpp>
#include <string>

#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// The phase slices of `run`'s ops that start before `exact_until_us`: [device, kind, start_us,
/// end_us, op] with kind 'e' routed experts, 's' compute slowed by the all-to-all's SMs, 'h'
/// all-to-all hidden under compute, 'x' all-to-all exposed. Empty without MoE.
nlohmann::json moe_phase_slices(const ResolvedScenario& resolved, const ScheduleRun& run,
                                double exact_until_us);

/// Per device: [the routed experts' static bytes, what their MLPs keep per microbatch], summed
/// over the stages it holds. Empty without MoE.
nlohmann::json expert_memory_per_device(const ScheduleRun& run);

}  // namespace bubblesim
