#include "sim/costmodel/model_flops.h"

#include "sim/costmodel/layer_work.h"

namespace bubblesim {
namespace {

/// Multiply-accumulates per token of the attention projections of one layer, and the dimension
/// of a query/key head and of a value head.
struct AttentionShape {
  double projection_macs = 0;
  double qk_dim = 0, v_dim = 0;
};

AttentionShape attention_shape(const TransformerModel& m) {
  const auto h = static_cast<double>(m.hidden);
  const auto heads = static_cast<double>(m.attention.heads);
  AttentionShape a;
  if (m.attention.mla) {
    // DeepSeek's latent attention: the low-rank query (or a full one), the joint KV down
    // projection with the decoupled RoPE key, the KV up projection, the output projection.
    const MlaSpec& mla = *m.attention.mla;
    const auto q_rank = static_cast<double>(mla.q_lora_rank);
    const auto kv_rank = static_cast<double>(mla.kv_lora_rank);
    const auto nope = static_cast<double>(mla.qk_nope_head_dim);
    const auto rope = static_cast<double>(mla.qk_rope_head_dim);
    const auto v = static_cast<double>(mla.v_head_dim);
    a.qk_dim = nope + rope;
    a.v_dim = v;
    const double q = q_rank > 0 ? h * q_rank + q_rank * heads * a.qk_dim : h * heads * a.qk_dim;
    a.projection_macs = q + h * (kv_rank + rope) + kv_rank * heads * (nope + v) + heads * v * h;
    return a;
  }
  const auto d = static_cast<double>(m.head_dim());
  const auto kv = static_cast<double>(m.kv());
  a.qk_dim = d;
  a.v_dim = d;
  // Q (h x heads d), K and V (h x kv d each), the output projection (heads d x h).
  a.projection_macs = 2.0 * h * heads * d + 2.0 * h * kv * d;
  return a;
}

/// Multiply-accumulates per token of one MLP of hidden size f.
double mlp_macs(const TransformerModel& m, double f) {
  const double matrices = m.mlp.kind == MlpKind::Swiglu ? 3.0 : 2.0;
  return matrices * static_cast<double>(m.hidden) * f;
}

/// Forward multiply-accumulates of one token, split as ModelFlops.
ModelFlops forward_macs_per_token(const TransformerModel& m) {
  const AttentionShape a = attention_shape(m);
  const auto s = static_cast<double>(m.seq_len);
  const auto heads = static_cast<double>(m.attention.heads);
  // QK^T and AV over the causal lower triangle: half the s x s scores (kCausalFraction).
  const double core_macs = s * heads * (a.qk_dim + a.v_dim) * kCausalFraction;
  const double dense_mlp = mlp_macs(m, static_cast<double>(m.ffn()));
  ModelFlops macs;
  for (std::int64_t i = 0; i < m.layers; ++i) {
    macs.linear += a.projection_macs;
    macs.other += core_macs;
    if (m.is_moe_layer(i)) {
      const MoeSpec& moe = *m.moe;
      const auto fe =
          static_cast<double>(moe.expert_ffn_hidden > 0 ? moe.expert_ffn_hidden : m.ffn());
      macs.linear += static_cast<double>(moe.top_k + moe.shared_experts) * mlp_macs(m, fe);
    } else {
      macs.linear += dense_mlp;
    }
  }
  macs.other += static_cast<double>(m.hidden) * static_cast<double>(m.embedding.vocab);  // LM head
  return macs;
}

}  // namespace

double forward_flops_per_token(const TransformerModel& m) {
  return 2.0 * forward_macs_per_token(m).total();
}

double training_flops_per_sequence(const TransformerModel& m) {
  return 3.0 * forward_flops_per_token(m) * static_cast<double>(m.seq_len);
}

ModelFlops training_flops_split(const TransformerModel& m) {
  const ModelFlops macs = forward_macs_per_token(m);
  const double per_mac = 3.0 * 2.0 * static_cast<double>(m.seq_len);
  return ModelFlops{macs.linear * per_mac, macs.other * per_mac};
}

std::optional<double> seconds_at_peak(const TransformerModel& m, const GpuSpec& gpu) {
  const double peak = gpu.flops.flops_per_second();
  const double fp8 = m.fp8_linear ? gpu.flops_fp8.flops_per_second() : peak;
  if (!(peak > 0.0) || !(fp8 > 0.0)) return std::nullopt;
  const ModelFlops flops = training_flops_split(m);
  return flops.linear / fp8 + flops.other / peak;
}

}  // namespace bubblesim
