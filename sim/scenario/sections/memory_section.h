#pragma once
// Section reader `memory` (docs/memory.md):
//   memory: {budget: 80GiB | [per device], host_capacity, release: split|backward-complete,
//            recompute: {policy: none|full|selective|op, granularity: layer|stage,
//                       unit_layers | layers | every, stages | fraction},
//            offload: {policy: none|full|selective, prefetch, stages, min_idle, bandwidth}}
// Offloading needs a host: `offload.bandwidth` under fixed-delay, or a host vertex reachable from
// every placed GPU. Sets Scenario::memory.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_memory_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
