#include "sim/costmodel/op_checkpoint.h"

#include <algorithm>

namespace bubblesim {

void add_op_checkpoint(ComponentWork& c, const TransformerModel& m, const Sharding& sh,
                       const Dims& x) {
  const double T = x.tokens(), h = x.h, e = x.e, d = x.d;
  const double q = x.rank.heads * d, kv = x.rank.kv * d, f = x.rank.ffn;
  const double H = x.replicated.hidden_bytes;
  const bool swiglu = m.mlp.kind == MlpKind::Swiglu;
  // The recomputed matmuls: the even ones of wq, wk, wv, wo, w1, (w3,) w2.
  PassWork& r = c.op.recompute;
  r.gemms.push_back({"wk", T, kv, h});
  r.gemms.push_back({"attention_out", T, h, q});
  if (swiglu)
    r.gemms.push_back({"mlp_up_w3", T, f, h});
  else
    r.gemms.push_back({"mlp_down", T, h, f});
  // Everything outside the save list is redone: the norms, the residual adds and the MLP's
  // activation (the layer's memory-bound forward kernels).
  r.memory = c.forward.memory;
  // Tensor parallelism: the reduce-scatters' outputs are saved, so only sequence parallelism's
  // all-gathers run again (half of each reduce-scatter + all-gather pair); without sequence
  // parallelism the all-reduces are not in the save list and run again.
  c.op.recompute_tp = sh.sp ? c.comm.tp_allreduce_forward / 2.0 : c.comm.tp_allreduce_forward;

  // What F keeps per layer: the block's input (the checkpoint), wq's and wv's outputs, the
  // attention kernel's output and log-sum-exp, w1's output, and w2's output with a SwiGLU MLP
  // (the seventh matmul is odd: saved although nothing reads it in the backward); under sequence
  // parallelism the two reduce-scatters' outputs.
  const double lse = 4.0 * x.b * x.rank.heads * x.q_len();
  const double in_activation = H + T * e * (q + kv + q + f) + lse;  // part of M_B as well
  c.op.saved_bytes = in_activation + (swiglu ? T * h * e : 0.0) + (sh.tp > 1 && sh.sp ? 2 * H : 0);
  // While B runs through the layer it rebuilds the rest of its M_B (norm outputs, K, the MLP's
  // other activation tensors).
  c.op.unit_bytes = std::max(0.0, c.activation_bytes - in_activation);
}

}  // namespace bubblesim
