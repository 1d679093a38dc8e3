#pragma once
// Model FLOPs of a training step (docs/recipes.md): the number a recipe's "model TFLOP/s per GPU"
// and MFU divide by, counted from `model:` alone, whatever the schedule, recompute or kernels do.
//
// Per token, forward: 2 x the multiply-accumulates of every weight matrix a token passes through
// (attention projections, the MLP or its top_k routed plus shared experts, the LM head), plus
// the attention core's 2 x 2 x s x heads x head_dim (QK^T and AV over the whole sequence, the
// causal mask not discounted, as Megatron-LM and the papers count). Training = 3 forwards
// (backward = 2 x forward); recomputation is not counted (model FLOPs, PaLM's MFU). This is
// the "6N + attention" form, N the weights a token uses; for a GPT model (multi-head attention,
// 4h GeLU MLP) per sequence of s tokens over l layers it is exactly Megatron's (Narayanan et al.,
// SC21, eq. 3 without its recompute pass): 72 s l h^2 (1 + s/(6h) + V/(12 l h)), and with GQA,
// SwiGLU and MoE it is Megatron-LM's num_floating_point_operations (training.py). Left out, as
// there: norms, softmax, the router, embeddings lookup, and the multi-token prediction modules.

#include "sim/costmodel/model_spec.h"

namespace bubblesim {

/// Forward FLOPs of one token of a sequence of model.seq_len tokens.
double forward_flops_per_token(const TransformerModel& model);

/// Model FLOPs of one training sequence (model.seq_len tokens): 3 forwards.
double training_flops_per_sequence(const TransformerModel& model);

}  // namespace bubblesim
