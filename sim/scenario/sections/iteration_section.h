#pragma once
// Section reader `iteration` (docs/iterations.md):
//   iteration: {count: N, barrier: global | none}
// count (default 2): training iterations replayed, the iteration time being the period of the
// last; barrier (default global): Megatron's synchronous step, where every device waits for the
// gradient-norm all-reduce before its optimizer step, or none, where each device steps and starts
// its next iteration on its own (the zero-bubble paper's post-validation). Sets
// Scenario::iteration.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_iteration_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
