// The multi-token prediction module's own work (mtp_work.h); its block and head pass are
// transformer_layer_work's and lm_head_work's.
#include "sim/costmodel/mtp_work.h"

#include "sim/costmodel/layer_dims.h"

namespace bubblesim {

ComponentWork mtp_projection_work(const TransformerModel& m, const Sharding& sh) {
  const Dims x = dims_of(m, sh);
  const double T = x.tokens(), h = x.h, e = x.e, H = x.replicated.hidden_bytes;
  const double out = h / x.t;  // M_k's output columns on this rank (column-parallel)
  ComponentWork c;
  // The embedding of the tokens k places ahead: a lookup in the shared vocab-parallel table
  // (every rank writes its masked T x h, as embedding_work), then summed over TP; B
  // scatter-adds its T rows of gradient into the shared embedding's weight gradient.
  c.forward.memory.push_back({"mtp_embedding_lookup", 2.0 * T * h * e});
  c.backward_input.memory.push_back({"mtp_embedding_grad", 2.0 * T * h * e});
  // RMSNorm of the hidden state and of the embedding (read x, write y; B reads x and dy, writes
  // dx), and their concatenation into the 2h-wide input of M_k (reads both, writes it).
  c.forward.memory.push_back({"mtp_norms", 2.0 * 2.0 * H});
  c.forward.memory.push_back({"mtp_concat", 2.0 * 2.0 * H});
  c.backward_input.memory.push_back({"mtp_norms_grad", 2.0 * 3.0 * H});
  // M_k: F Y = X W (T x 2h times 2h x h/t), B dX = dY W^T, W dW = X^T dY; a linear layer (FP8
  // under model.fp8_linear).
  c.forward.gemms.push_back({"mtp_projection", T, out, 2.0 * h});
  c.backward_input.gemms.push_back({"mtp_projection_dx", T, 2.0 * h, out});
  c.backward_weight.gemms.push_back({"mtp_projection_dw", 2.0 * h, out, T});
  // Kept F -> B: both norms' inputs and M_k's input (2h wide; the sequence shard under SP).
  // Kept B -> W: M_k's input (wgrad_input_tokens rows) and its output gradient.
  c.activation_bytes = 2.0 * H + 2.0 * H;
  c.input_bytes = H;
  c.weight_grad_bytes = e * (x.wgrad_input_tokens * 2.0 * h + T * out);
  // Parameters: enorm, hnorm, M_k (2h x h, no bias) and the depth's final norm before the
  // shared head (DeepSeek's shared_head.norm); a norm has a shift too with `bias` (LayerNorm).
  const double norm = m.bias ? 2.0 * h : h;
  c.parameters = 3.0 * norm + 2.0 * h * h;
  c.parameters_per_gpu = 3.0 * norm + 2.0 * h * out;
  c.parameters_activated = c.parameters;
  // TP, in all-reduce equivalents of T h e (Megatron-LM multi_token_prediction.py): the lookup
  // is summed as the main embedding's (all-reduce; with SP a reduce-scatter, whose backward is
  // an all-gather); with SP M_k all-gathers its 2h-wide input (B reduce-scatters its gradient;
  // without SP B all-reduces it); its h-wide output is all-gathered over TP (backward: a split),
  // and with SP scattered to the sequence shard again (backward: an all-gather).
  if (sh.tp > 1) {
    c.comm.tp_allreduce_forward = (sh.sp ? 0.5 : 1.0) + (sh.sp ? 1.0 : 0.0) + 0.5;
    c.comm.tp_allreduce_backward = (sh.sp ? 0.5 : 0.0) + (sh.sp ? 1.0 : 2.0) + (sh.sp ? 0.5 : 0.0);
  }
  c.comm.tp_collective_bytes = T * h * e;
  return c;
}

bool mtp_block_is_moe(const TransformerModel& m) { return m.is_moe_layer(m.layers); }

double mtp_parameters(const TransformerModel& m) {
  if (m.embedding.mtp_depth <= 0) return 0.0;
  const Sharding one;
  const double per_depth = mtp_projection_work(m, one).parameters +
                           transformer_layer_work(m, one, mtp_block_is_moe(m)).parameters;
  return static_cast<double>(m.embedding.mtp_depth) * per_depth;
}

}  // namespace bubblesim
