#pragma once
// The third phase of `bubblesim plan` (plan.h): one candidate's scenario run alone, exactly as
// `bubblesim run` runs it (load, resolve, generate, both replays), and read back in the plan's
// terms: iteration time, tokens/s/GPU, MFU, peak memory against the budget, and the iteration
// split by cause (sim/engine/idle_split.h) in seconds per iteration.

#include <string>

#include "schedules/registry.h"
#include "sim/plan/plan_result.h"

namespace bubblesim {

/// Runs `scenario_yaml` (named `name`, relative files against `base_dir`): its one schedule.
PlanReplay replay_candidate(const std::string& scenario_yaml, const std::string& name,
                            const std::string& base_dir, const Registry& registry);

}  // namespace bubblesim
