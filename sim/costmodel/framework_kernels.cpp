#include "sim/costmodel/framework_kernels.h"

namespace bubblesim {

ActivationBytes activation_kernel_bytes(MlpKind mlp, ActivationFusion fusion, double e) {
  // Fused (one kernel a pass): GeLU reads its input and writes its output (2e), its backward
  // reads the gradient and the input and writes the input gradient (3e); SwiGLU reads gate and
  // up and writes the product (3e), its backward reads the gradient, gate and up and writes both
  // gradients (5e). The bias add is folded into the kernel (a bias vector is negligible).
  ActivationBytes fused = mlp == MlpKind::Swiglu ? ActivationBytes{3.0 * e, 5.0 * e}
                                                 : ActivationBytes{2.0 * e, 3.0 * e};
  // Unfused: Megatron's TorchScript functions (megatron/model/fused_bias_gelu.py,
  // fused_bias_swiglu.py) run one kernel per aten operation when the JIT fuser does not fuse
  // them; a unary op reads and writes one tensor (2e), a binary op reads two (3e).
  ActivationBytes unfused;
  if (mlp == MlpKind::Gelu) {
    // bias_gelu: x = bias + y (2e); x * 0.5, 0.79788456 * x, 0.044715 * x (3 x 2e); (.) * x (3e);
    // 1 + (.) (2e); (.) * (.) (3e); tanh (2e); 1.0 + (.) (2e); (.) * (.) (3e): 23e.
    // bias_gelu_back: x = bias + y (2e); the tanh term again (0.79788456 x, 0.044715 x, * x,
    // 1 +, *, tanh: 2e+2e+3e+2e+3e+2e); 0.5 * x (2e); t * t (3e); 1 - (2e); 0.1070322243 * x
    // (2e); * x (3e); 0.79788456 + (2e); (.) * (.) (3e); 0.5x * (.) (3e); 1 + t (2e); 0.5 * (2e);
    // + (3e); ff * g (3e): 46e.
    unfused = {23.0 * e, 46.0 * e, 10.0, 19.0};  // the operations listed: 10 and 19 kernels
  } else {
    // swiglu: silu(y1) (2e), * y2 (3e): 5e. swiglu_back: sigmoid(y1) (2e), g * (3e), sigmoid(y1)
    // (2e), 1 - (2e), y1 * (3e), 1 + (2e), (.) * (.) (3e), * y2 (3e), silu(y1) (2e), g * (3e),
    // cat of the two gradients (4e): 29e.
    unfused = {5.0 * e, 29.0 * e, 2.0, 11.0};
  }
  switch (fusion) {
    case ActivationFusion::Unfused:
      return unfused;
    case ActivationFusion::ForwardUnfused:
      return {unfused.forward, fused.backward, unfused.forward_kernels, fused.backward_kernels};
    case ActivationFusion::Eager:
      // Eager PyTorch: F.gelu is one aten kernel each way (the bias is in the GEMM's epilogue), so
      // GeLU costs what the fused kernel does. SwiGLU, `silu(gate) * up` (torchtitan's and Hugging
      // Face's FeedForward): silu (2e) and the multiply (3e); autograd's backward runs the
      // multiply's two gradients (3e each) and silu_backward (3e), and keeps silu's output for
      // the multiply's backward, one tensor more than the fused kernel keeps.
      if (mlp == MlpKind::Gelu) return fused;
      return {5.0 * e, 9.0 * e, 2.0, 3.0, 1.0};
    case ActivationFusion::Fused:
      break;
  }
  return fused;
}

void add_norms_and_residuals(ComponentWork& c, const TransformerModel& m, const Dims& x) {
  const double H = x.replicated.hidden_bytes, M = x.replicated.mask_bytes, e = x.e;
  const double elements = H / e;  // of one hidden-size tensor of the replicated region
  // LayerNorm (a model with biases) is one kernel in every framework (F.layer_norm): the
  // composite applies to RMSNorm only.
  NormFusion fusion = m.kernels.norm_fusion;
  if (fusion == NormFusion::Composite && m.bias) fusion = NormFusion::Fused;
  // Two norms, each one kernel: F reads x and writes y (2H), B reads dy and x and writes dx (3H).
  MemoryWork norms{"norms", 2.0 * 2.0 * H, 2.0}, norms_grad{"norms_grad", 2.0 * 3.0 * H, 2.0};
  if (fusion == NormFusion::Composite) {
    // PyTorch's composite RMSNorm, per element of e bytes (Hugging Face's LlamaRMSNorm, and
    // torch's rms_norm where it does not dispatch to the fused kernel): to fp32 (e + 4), pow (8),
    // mean (4), x * rsqrt (8), to the dtype (4 + e), * weight (2e): 28 + 4e bytes in 6 kernels,
    // with the add-eps and rsqrt on one value per row, 8. Autograd's backward: * weight (2e) and
    // the weight's gradient (2e), the cast's (e + 4), x * rsqrt's two (8 each), mean's (4),
    // pow's (12), the two input gradients summed (12), the upcast's (4 + e): 52 + 6e in 10.
    norms = {"norms", 2.0 * elements * (28.0 + 4.0 * e), 2.0 * 8.0};
    norms_grad = {"norms_grad", 2.0 * elements * (52.0 + 6.0 * e), 2.0 * 10.0};
  }
  // Two residual adds (with dropout, Megatron's bias-dropout-add): read branch and residual,
  // write the sum (3H + the mask); B sums the two gradients at each branch point (3H) and, with
  // dropout, applies the mask to the branch's gradient (2H + mask).
  MemoryWork residual{"residual_adds", 2.0 * (3.0 * H + M), 2.0};
  MemoryWork residual_grad{"residual_grads", 2.0 * (3.0 * H + (x.dropout ? 2.0 * H + M : 0.0)),
                           2.0};
  if (fusion == NormFusion::WithResidual) {
    // torch.compile compiles each block as one graph: the attention's residual add and the MLP
    // norm after it become one kernel (read x and the branch, write the sum and the normed:
    // 4H for the add's 3H and the norm's 2H); in B the norm's gradient and the sum at that
    // branch point are one kernel (read dy, the input and the residual's gradient, write dx:
    // 4H for 3H + 3H). The block's first norm and its last add meet other graphs and stay.
    residual.bytes -= H;
    residual.kernels -= 1.0;
    residual_grad.bytes -= 2.0 * H;
    residual_grad.kernels -= 1.0;
  }
  c.forward.memory.push_back(norms);
  if (m.attention.kind == AttentionKind::Flash) {
    // Selective recompute under FlashAttention redoes both norms in B and does not keep their
    // outputs (the QKV and MLP-up inputs, H each).
    c.selective_recompute.memory.push_back(norms);
    c.selective_bytes += 2.0 * H;
  }
  c.forward.memory.push_back(residual);
  c.backward_input.memory.push_back(norms_grad);
  c.backward_input.memory.push_back(residual_grad);
}

void add_rope(ComponentWork& c, const TransformerModel& m, const Dims& x, double q_width,
              double k_width) {
  if (!m.attention.rope) return;
  const double e = x.e, elements = x.tokens() * (q_width + k_width);
  // Bytes per element and kernels per tensor (Q and K each), F and B.
  double f = 2.0 * e, b = 2.0 * e, f_kernels = 1.0, b_kernels = 1.0;
  switch (m.kernels.rope_fusion) {
    case RopeFusion::Complex:
      // torchtitan's apply_rotary_emb: x.float() (e + 4), the complex multiply by freqs_cis
      // (read 4, write 4), .type_as(x) (4 + e): 16 + 2e in 3 kernels; autograd runs the same
      // three backwards (the conjugate multiply between the casts).
      f = b = 16.0 + 2.0 * e;
      f_kernels = b_kernels = 3.0;
      break;
    case RopeFusion::RotateHalf:
      // Hugging Face's apply_rotary_pos_emb, x * cos + rotate_half(x) * sin: multiply (2e), the
      // negated half (e), cat (2e), multiply (2e), add (3e): 10e in 5 kernels. Autograd: the two
      // multiplies' gradients (2e each), the negation's (e), two slice gradients written into
      // zeroed full tensors (1.5e each) and the three gradients summed (3e each): 14e in 7.
      f = 10.0 * e;
      b = 14.0 * e;
      f_kernels = 5.0;
      b_kernels = 7.0;
      break;
    case RopeFusion::Fused:
      break;  // one kernel reads x and writes the rotated x (Transformer Engine's fused RoPE)
  }
  c.forward.memory.push_back({"rope", f * elements, 2.0 * f_kernels});
  c.backward_input.memory.push_back({"rope_grad", b * elements, 2.0 * b_kernels});
}

void add_gqa_repeat(ComponentWork& c, const TransformerModel& m, const Dims& x) {
  if (!m.kernels.gqa_repeat || x.rank.kv >= x.rank.heads) return;
  // torchtitan's repeat_kv (expand + reshape: a copy): read K and V at kv heads, write them at
  // every query head; B sums each group's gradients back. The kernel saves the copies for B.
  const double small = 2.0 * x.tokens() * x.rank.kv * x.d * x.e;
  const double big = 2.0 * x.tokens() * x.rank.heads * x.d * x.e;
  c.forward.memory.push_back({"gqa_repeat", small + big, 2.0});
  c.backward_input.memory.push_back({"gqa_repeat_grad", big + small, 2.0});
  c.activation_bytes += big - small;
}

}  // namespace bubblesim
