#pragma once
// Cost profile of a GPT-style transformer split into p pipeline stages.
//
// Per layer, with microbatch size b, sequence length s, hidden size h, attention heads a
// (FLOPs count a multiply-add as 2):
//   forward F                 = b s h (24 h + 4 s)     Narayanan et al. 2021, "Efficient
//   Large-Scale backward for inputs B     = b s h (24 h + 8 s)       Language Model Training on GPU
//   Clusters backward for weights W    = 24 b s h^2               Using Megatron-LM", sec. 5.1; Qi
//   et al. 2023,
//                                                        "Zero Bubble Pipeline Parallelism", Table
//                                                        1
//   activation memory M_B     = s b (34 h + 5 a s) bytes  Korthikanti et al. 2022, "Reducing
//                                                        Activation Recomputation in Large
//                                                        Transformer Models", eq. 1 (16-bit
//                                                        activations; scaled by dtype_bytes / 2 for
//                                                        other dtypes)
//   weight-gradient memory M_W = 32 s b h bytes          Zero Bubble, Table 1 (same scaling)
//   stage input (recompute)   = s b h dtype_bytes        the hidden state entering the stage
//   p2p bytes                 = s b h dtype_bytes        the hidden state sent to the next stage
//   parameters                = 12 h^2 + 13 h            Narayanan et al. 2021, sec. 5.1
// The LM head adds 2 b s h V FLOPs to F, B and W of the last stage (the logits GEMM, Narayanan et
// al.); the embedding lookup costs no FLOPs. The word embedding (V h parameters) is held by the
// first stage and, for the tied LM head, again by the last (as Megatron-LM does).
// Static memory = parameters * bytes per parameter: dtype_bytes (weights) + 4 (fp32 gradient
// accumulation) + 12 (Adam: fp32 master weights and two moments), i.e. 18 for bf16/fp16; for fp32
// weights there is no separate master copy: 4 + 4 + 8 = 16 (Megatron-LM distributed-optimizer
// documentation, "bytes per parameter" table; no ZeRO sharding across data parallelism).
// Layers are split evenly over the p stages; when p does not divide them, the first L mod p stages
// take one layer more. Time = FLOPs / (peak FLOP/s * efficiency), rounded to picoseconds.
// R (recompute) = F; the fused F&B time is left 0 (= F + full B).

#include <cstdint>
#include <vector>

#include "schedules/stage_costs.h"
#include "tools/scenario/scenario.h"

namespace bubblesim {

/// Per-layer quantities of the formulas above (FLOPs and bytes as reals, before rounding).
struct TransformerLayerCosts {
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  double activation_bytes = 0;
  double weight_grad_bytes = 0;
  double hidden_state_bytes = 0;  // s b h dtype_bytes: p2p and stage input
  double parameters = 0;
  double lm_head_flops = 0;  // 2 b s h V, added to F, B and W of the last stage
  double embedding_parameters = 0;
};

TransformerLayerCosts transformer_layer_costs(const TransformerModel& model);

/// Layers per stage: even split, the first (layers mod stages) stages one more.
/// Throws std::invalid_argument when layers < stages.
std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t stages);

/// Bytes per parameter for weights + gradients + Adam state (18 for 16-bit dtypes, 16 for fp32).
std::int64_t static_bytes_per_parameter(std::int64_t dtype_bytes);

/// The derived profile, one StageCost per pipeline stage. Throws std::invalid_argument when the
/// model has fewer layers than stages or the GPU rate is not positive.
CostProfile transformer_costs(const TransformerModel& model, const GpuSpec& gpu,
                              std::int32_t stages);

}  // namespace bubblesim
