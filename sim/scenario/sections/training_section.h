#pragma once
// Section reader `training` (docs/recipes.md): the job as its recipe states it.
//   training: {global_batch: N}          N sequences per optimizer step, or
//   training: {global_batch_tokens: T}   T tokens per optimizer step (T / model.seq_len sequences)
// The microbatches per pipeline follow: m = N / (micro_batch_size x dp), micro_batch_size being
// model.micro_batch_size (1 without a model) and dp parallelism.dp; `pipeline.microbatches` may
// then be left out, and when given must agree. A global batch that does not divide is refused
// with the nearest ones that do. Sets Scenario::microbatches (the global batch is then
// microbatches x micro_batch_size x dp, as every report computes it).

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_training_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
