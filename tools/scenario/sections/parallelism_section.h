#pragma once
// Section reader `parallelism` + `data_parallel` (docs/parallelism.md), either may be absent:
//   parallelism:   {dp: D, tp: T, order: [tp, pp, dp]}   rank layout, innermost first
//   data_parallel: {bucket: 25MiB, overlap: true, algorithm: ring|tree|hierarchical,
//                   replica_sync: true}
// Sets Scenario::parallelism (the GPUs of the ranks come later, from the placement).

#include "tools/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_parallelism_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
