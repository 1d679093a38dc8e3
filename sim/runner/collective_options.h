#pragma once
// The scenario's choices for every collective it times on the topology (docs/parallelism.md,
// "NCCL's algorithms"): `data_parallel.algorithm`, `.channels`, `.ring_steps`, and NCCL's tuning
// model when `cluster.gpu.first_principles.nccl_tuning` is on (with the GPU's generation).

#include "sim/engine/collective_plan.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

CollectiveOptions collective_options(const Scenario& scenario);

}  // namespace bubblesim
