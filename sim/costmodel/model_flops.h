#pragma once
// Model FLOPs of a training step (docs/recipes.md): the number a recipe's "model TFLOP/s per GPU"
// and MFU divide by, counted from `model:` alone, whatever the schedule, recompute or kernels do.
//
// Per token, forward: 2 x the multiply-accumulates of every weight matrix a token passes through
// (attention projections, the MLP or its top_k routed plus shared experts, the LM head), plus
// the attention core's 2 x 2 x s x heads x head_dim / 2 (QK^T and AV over the lower triangle the
// causal mask leaves: what the kernels compute, as Megatron-LM's num_floating_point_operations
// ("Only half of the attention matrix is non-zero", training.py) and Megatron-Bridge's
// flop_utils count it today). Training = 3 forwards (backward = 2 x forward); recomputation is
// not counted (model FLOPs, PaLM's MFU). This is the "6N + attention" form, N the weights a token
// uses; for a GPT model (multi-head attention, 4h GeLU MLP) per sequence of s tokens over l
// layers it is 72 s l h^2 (1 + s/(12h) + V/(12 l h)): Narayanan et al.'s (SC21) eq. 3 without
// its recompute pass, with the causal half of their s/(6h). Left out, as there: norms, softmax,
// the router, embeddings lookup, and the multi-token prediction modules.
//
// Counting only FLOPs the kernels run keeps MFU a fraction a GPU can reach: every model FLOP is
// one the cost model times at or below the GPU's peak (sim/report/throughput.h).

#include <optional>

#include "sim/costmodel/model_spec.h"

namespace bubblesim {

/// Model FLOPs split by the peak they run at: the linear layers' GEMMs (attention projections,
/// MLPs and experts: FP8 under model.fp8_linear, layer_work.h's GemmWork::linear) and the rest
/// (the attention core and the LM head, in the model's dtype).
struct ModelFlops {
  double linear = 0;
  double other = 0;
  double total() const { return linear + other; }
};

/// Forward FLOPs of one token of a sequence of model.seq_len tokens.
double forward_flops_per_token(const TransformerModel& model);

/// Model FLOPs of one training sequence (model.seq_len tokens): 3 forwards.
double training_flops_per_sequence(const TransformerModel& model);

/// The same, split into its linear GEMMs and the rest.
ModelFlops training_flops_split(const TransformerModel& model);

/// Seconds one training sequence's model FLOPs take at `gpu`'s peaks: each FLOP at the peak of the
/// precision it runs in (the linear GEMMs at the FP8 peak under model.fp8_linear, the rest at
/// the dtype's, `cluster.gpu.flops`). No GPU runs a sequence faster; MFU is this over the time it
/// took. None without a positive peak.
std::optional<double> seconds_at_peak(const TransformerModel& model, const GpuSpec& gpu);

}  // namespace bubblesim
