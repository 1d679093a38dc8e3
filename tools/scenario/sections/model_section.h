#pragma once
// Section reader `model` + `cluster` (README "Scenario keys"): a GPT-style transformer
//   model: {layers, hidden, heads, seq_len, micro_batch_size: 1, vocab: 0, dtype: bf16}
// and the GPU that runs it
//   cluster: {gpu: {flops, efficiency: 1, memory, memory_bandwidth}}
// Sets Scenario::model and Scenario::gpu when valid; the costs section derives costs from them.

#include "tools/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_model_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
