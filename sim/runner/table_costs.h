#pragma once
// The costs a table replays with, per table stage (CostProfile::for_table), and the refusal of a
// chunk count the model cannot realise: with `model:` deriving the costs, a table with v chunks
// per device needs whole layers in each of its p x v virtual stages, the embedding on the first
// and the LM head and loss on the last (sim/costmodel/stage_layout.h). Dividing a stage's costs
// evenly among its chunks would spread the embedding and the head over devices that do not hold
// them, so a count without such a layout is an error naming the schedule's parameter, its value
// and the counts that split, unless the user states the split (`model.layers_per_chunk`, or
// `model.layers_per_stage: balanced`; docs/models.md "Stage layout").

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/stage_costs.h"
#include "sim/runner/resolve.h"

namespace bubblesim {

/// "" when a table with `chunks` chunks per device can be built from the resolved costs, else
/// why not and what would work. `schedule`: the request (its name and parameters name the key).
std::string chunk_layout_refusal(const ResolvedScenario& resolved, std::int32_t chunks,
                                 const ScheduleRequest& schedule);

/// resolved.costs.for_table(chunks), or InputError at the schedule entry (key `schedules`) with
/// chunk_layout_refusal's message.
std::vector<StageCost> table_costs(const ResolvedScenario& resolved, std::int32_t chunks,
                                   const ScheduleRequest& schedule);

}  // namespace bubblesim
