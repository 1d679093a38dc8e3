#pragma once
// Internal to the cost model: torchtitan's per-op selective activation checkpointing
// (`memory.recompute.policy: op`, docs/memory.md) on one dense transformer layer. torchtitan
// wraps each TransformerBlock in torch.utils.checkpoint with a policy that saves the outputs of
// the ops in its save list (matmuls, the SDPA / FlashAttention kernels, reduce-scatters) except
// every second matmul, and recomputes everything else in the backward (torchtitan
// torchtitan/distributed/activation_checkpoint.py, `_apply_op_sac` / `SelectiveAC`:
// "Saves output of all compute ops, except every second mm"). In a Llama block the matmuls run
// wq, wk, wv, wo, w1, w3, w2 (torchtitan's Attention and FeedForward forwards), so wq, wv, w1 and
// w2 are saved and wk, wo and w3 recomputed (a GeLU MLP: w1 saved, w2 recomputed).

#include "sim/costmodel/layer_dims.h"

namespace bubblesim {

/// Fills c.op.recompute, c.op.saved_bytes, c.op.unit_bytes and c.op.recompute_tp for a dense
/// layer with fused attention; `c` holds the layer's forward work, activations and comm.
void add_op_checkpoint(ComponentWork& c, const TransformerModel& m, const Sharding& sh,
                       const Dims& x);

}  // namespace bubblesim
