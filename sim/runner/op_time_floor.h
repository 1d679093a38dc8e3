#pragma once
// Op times a GPU cannot beat: where a scenario gives op times beside a model (costs.forward and
// the other op keys, costs.per_layer, costs.profile), the model's FLOPs of a microbatch at the
// GPU's peak (model_flops.h: seconds_at_peak, each FLOP at the peak of its precision) are a
// floor under the pipeline's compute per microbatch. Times below it cannot be true of that model
// on that GPU (a typo in a unit, a profile of another model or GPU): they are refused, naming the
// key and the floor, instead of reported as an MFU above 100%. Derived op times are at or above
// the floor by construction (every efficiency is at most 1).

#include "sim/runner/resolve.h"

namespace bubblesim {

/// Throws InputError at scenario.costs.times_key when the resolved per-GPU F + B + W of one
/// microbatch, summed over the pipeline's stages (the overlapped F&B pair where given and
/// shorter), is below the model's FLOPs of that microbatch on the stage's tp x cp GPUs at the
/// GPU's peak. Nothing to check without a model, a GPU peak or given op times.
void check_op_time_floor(const Scenario& scenario, const ResolvedScenario& resolved);

}  // namespace bubblesim
