#pragma once
// Internal to the cost model: what `memory.recompute` does to the memory of one (virtual) stage
// (docs/memory.md): which layers are recomputed and in how many checkpointed units, what F then
// keeps, and the unit a backward rebuilds while it runs. model_costs.cpp adds the times.

#include "schedules/memory_settings.h"

namespace bubblesim {

/// One layer of a kind, per GPU (layer_work.h's ComponentWork fields of the same meaning).
struct LayerBytes {
  double activation = 0;  // M_B without recompute
  double input = 0;       // the layer's input: the checkpoint of a unit starting there
  double selective = 0;   // what selective recompute does not keep
  double op_saved = 0;    // what the op policy keeps (input and saved outputs)
  double op_unit = 0;     // what the op policy rebuilds while B runs through the layer
};

/// The layers of one stage and what is never recomputed (the embedding, the LM head and loss,
/// the multi-token prediction modules).
struct StageLayers {
  double dense = 0, moe = 0;
  LayerBytes dense_bytes, moe_bytes;
  double kept = 0;
};

struct StageRecompute {
  double full_activation = 0;  // M_B without recompute
  double activation = 0;       // what F keeps until the backward (M_B as replayed)
  double stage_input = 0;      // what F keeps until a whole-stage R op (granularity stage)
  double share = 0;            // full: the fraction of the stage's layers whose forward is redone
  double units = 0;            // checkpointed units one backward rebuilds, one after the other
  double unit = 0;             // the largest unit's rebuilt activations, held while B runs
};

/// Full recompute recomputes r of the stage's n layers in u units of k layers each: all n in n
/// units by default; `unit_layers` U: n in ceil(n / U) units of U (Megatron's uniform method,
/// the last unit shorter); `layers` N: the first min(N, n) one by one (Megatron's block method);
/// `every` N: the floor(n / N) layers N, 2N, ... of the stage one by one (torchtitan's
/// layer-frequency option, counted from the stage's first layer). F keeps the recomputed units'
/// inputs, the other layers' activations and what is never recomputed; a unit rebuilds its k
/// layers' activations less its input, which F kept. Selective: F drops every layer's selective
/// part, B rebuilds one layer's at a time. Op: F keeps every layer's saved outputs, B rebuilds
/// the rest of one layer's at a time. Granularity stage keeps M_B for the R op, which starts
/// from `stage_input`.
StageRecompute stage_recompute(const RecomputeSettings& settings, const StageLayers& layers);

}  // namespace bubblesim
