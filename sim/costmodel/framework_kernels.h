#pragma once
// Internal to the cost model: the memory-bound kernels whose count and traffic depend on how the
// training framework writes a layer (docs/models.md, "Frameworks"): the MLP activation (fused,
// Megatron's TorchScript operations, eager PyTorch), the norms and residual adds (one kernel, or
// PyTorch's composite RMSNorm, or torch.compile's norm fused with the residual add), the rotary
// embedding (fused, torchtitan's complex multiply in fp32, Hugging Face's rotate_half) and the K,
// V heads repeated for grouped-query attention. layer_work.cpp adds them to a layer's work.

#include "sim/costmodel/layer_dims.h"

namespace bubblesim {

/// HBM bytes per element of the activation's output (R x width), F and B, the kernels, and the
/// tensors of that size eager autograd keeps beyond the fused kernel's (SwiGLU's silu output).
struct ActivationBytes {
  double forward, backward;
  double forward_kernels = 1, backward_kernels = 1;
  double extra_kept = 0;
};

/// The MLP activation's kernels by `model.activation_fusion`.
ActivationBytes activation_kernel_bytes(MlpKind mlp, ActivationFusion fusion, double e);

/// The layer's two norms and two residual adds (F, B, and under FlashAttention the norms'
/// selective recompute), by `model.norm_fusion`.
void add_norms_and_residuals(ComponentWork& c, const TransformerModel& m, const Dims& x);

/// The rotary embedding of Q (`q_width` columns per rank) and K (`k_width`), by
/// `model.rope_fusion`; nothing without `model.rope`.
void add_rope(ComponentWork& c, const TransformerModel& m, const Dims& x, double q_width,
              double k_width);

/// `model.gqa_repeat`: K and V copied to every query head before the attention kernel (and their
/// gradients summed back); the kernel keeps the copies for B. Nothing when kv covers the heads.
void add_gqa_repeat(ComponentWork& c, const TransformerModel& m, const Dims& x);

}  // namespace bubblesim
