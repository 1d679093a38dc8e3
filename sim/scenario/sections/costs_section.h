#pragma once
// Section reader `costs` (README "Scenario keys"): per pipeline stage, each a scalar or a list of
// p values: forward, backward_input, backward_weight, recompute (default: forward),
// fused_forward_backward, activation_memory, weight_grad_memory (<= activation_memory),
// stage_input_memory, p2p_bytes, static_memory; `profile: FILE` (a measured CSV,
// cost_profile_csv.h) as the base; gradient_bytes and optimizer_step for data parallelism.
// With `model` + `cluster` the transformer costs are the base and explicit keys override them.
// Sets Scenario::costs, costs_source, the explicit sync costs of Scenario::parallelism and, from
// a profile with a cv column, Scenario::measured_cv.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_costs_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
