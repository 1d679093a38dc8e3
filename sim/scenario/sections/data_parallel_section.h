#pragma once
// The `data_parallel:` keys (docs/parallelism.md, "Data-parallel engines"), read by the
// parallelism section after `parallelism:`:
//   data_parallel: {engine: ddp|fsdp|fsdp2|deepspeed|megatron, bucket: 25MiB, overlap: true,
//                   reduce_dtype: fp32|bf16|fp16, fp8_param_gather: false, replicate: 1,
//                   overlap_param_gather: true, algorithm: ring|tree|hierarchical,
//                   ring_steps: pipelined|stepped, replica_sync: true}
// The engine defaults to the framework preset's (`model.framework`), else to what
// `parallelism.zero` names (0 ddp, 1 megatron, 2 deepspeed, 3 fsdp2); its semantics
// (data_parallel_engine.h) are resolved here, once, into ParallelismSpec::data_parallel.

#include <optional>

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

/// Reads `node` (absent: every default) and resolves the engine's semantics.
void read_data_parallel(LoadContext& context, Scenario& scenario,
                        const std::optional<YamlNode>& node);

}  // namespace bubblesim
