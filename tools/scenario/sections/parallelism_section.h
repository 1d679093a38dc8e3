#pragma once
// Section reader `parallelism` + `data_parallel` (docs/parallelism.md), either may be absent:
//   parallelism:   {dp: D, tp: T, order: [tp, pp, dp], sp, zero, ep: E, a2a_overlap}
//                  rank layout innermost first; E-way expert parallelism over dp ranks
//   data_parallel: {bucket: 25MiB, overlap: true, algorithm: ring|tree|hierarchical,
//                   replica_sync: true}
// Sets Scenario::parallelism (the GPUs of the ranks come later, from the placement).

#include "tools/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_parallelism_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
