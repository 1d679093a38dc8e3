#pragma once
// Section reader `model` + `cluster` (docs/models.md): a GPT/Llama-style transformer
//   model: {preset, layers, hidden, heads, kv_heads, ffn_hidden, seq_len, micro_batch_size,
//           vocab, mlp, attention, tied_embeddings, bias, dropout, dtype, layers_per_stage,
//           layers_per_chunk}
// and the GPU that runs it
//   cluster: {gpu: {preset, flops, efficiency (a number or the roofline model), memory,
//                   memory_bandwidth}}
// (sim/costmodel/model_reader.h). Sets Scenario::model and Scenario::gpu when valid.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_model_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
