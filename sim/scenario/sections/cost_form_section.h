#pragma once
// After every section is read: the mechanisms that time a layer from the model (model.fp8_linear,
// the framework's host_launch, first_principles sustained_clock, gemm_waves and slowest_gpu)
// cannot act on layer times the scenario gives (costs.per_layer, or every stage's F, B and W),
// and first_principles.slowest_gpu would count the slowest chip a second time beside
// variability.slowest_of: group. Each such mechanism is refused where the user named it, and
// otherwise (a preset's or a default's) left off and listed in Scenario::costs.not_applied with
// the reason, which the reports show. No key therefore stays accepted while doing nothing.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void check_cost_form(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
