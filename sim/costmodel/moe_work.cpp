// The parts of a layer that DeepSeek-style models add (docs/moe.md): the mixture-of-experts MLP
// (router, shared experts, a GPU's routed experts, the all-to-all volume) and multi-head latent
// attention's projections.
#include <algorithm>
#include <string>

#include "sim/costmodel/layer_dims.h"

namespace bubblesim {

void add_moe_mlp(ComponentWork& c, const TransformerModel& m, const Sharding& sh, const Dims& x) {
  const MoeSpec& moe = *m.moe;
  const double h = x.h, e = x.e, T = x.tokens();
  const double experts = static_cast<double>(moe.experts);
  const double k = static_cast<double>(moe.top_k);
  const double fe =
      static_cast<double>(moe.expert_ffn_hidden > 0 ? moe.expert_ffn_hidden : m.ffn());
  const double ep = static_cast<double>(std::max<std::int64_t>(sh.ep, 1));
  // Each TP rank routes its 1/t of the tokens (Megatron's MoE with sequence parallelism).
  const double routed_tokens = T / x.t;

  // Router: logits = X W_r (h x experts, replicated), fp32 softmax / top-k over them (8 bytes per
  // logit read and written in F, 12 in B), the fp32 probabilities kept for B.
  const double logits = routed_tokens * experts;
  c.forward.gemms.push_back({"router", routed_tokens, experts, h, 1, false});
  c.backward_input.gemms.push_back({"router_dx", routed_tokens, h, experts, 1, false});
  c.backward_weight.gemms.push_back({"router_dw", h, experts, routed_tokens, 1, false});
  c.forward.memory.push_back({"router_topk", 8.0 * logits});
  c.backward_input.memory.push_back({"router_topk_grad", 12.0 * logits});
  c.activation_bytes += 4.0 * logits;
  c.weight_grad_bytes += e * (x.replicated.tokens * h + logits);  // the normed hidden state, once
  c.parameters += experts * h;
  c.parameters_per_gpu += experts * h;
  c.parameters_activated += experts * h;

  // Shared experts: one MLP of shared_experts x expert_ffn_hidden columns over every token,
  // tensor-parallel like the dense MLP.
  if (moe.shared_experts > 0) {
    const double width = static_cast<double>(moe.shared_experts) * fe;
    MlpBlock shared{"shared_expert"};
    shared.rows = T;
    shared.width = width / x.t;
    shared.parameters = shared.parameters_activated = mlp_parameters(m, width);
    shared.parameters_per_gpu = mlp_parameters(m, width / x.t);
    shared.input_counted = true;
    add_mlp(c, m, x, shared);
  }

  // Routed experts: experts / ep of them on this GPU (not split by TP), as one grouped GEMM.
  // Uniform routing gives the GPU routed_tokens x top_k token copies in all; a capacity factor pads
  // every expert to capacity_factor x its mean load; without one the hottest GPU computes
  // `imbalance` x the mean, and every GPU waits for it at the combine.
  const double local = experts / ep;
  const double load = moe.capacity_factor > 0 ? moe.capacity_factor : moe.imbalance;
  MlpBlock routed{"expert"};
  routed.groups = local;
  routed.rows = routed_tokens * k * load / local;
  routed.width = fe;
  routed.keeps_input = true;
  routed.parameters = experts * mlp_parameters(m, fe);
  routed.parameters_per_gpu = local * mlp_parameters(m, fe);
  routed.parameters_activated = k * mlp_parameters(m, fe);
  const double kept_before = c.activation_bytes;
  add_mlp(c, m, x, routed);
  // The combine y = sum_i p_i E_i(x) keeps each expert output for the gate weights' gradient.
  c.activation_bytes += routed.rows * local * h * e;
  c.experts = {routed.parameters_per_gpu, c.activation_bytes - kept_before};

  // Token permutation (`model.moe.permute: copies`, Megatron's MoEAlltoAllTokenDispatcher): the
  // token copies are gathered into expert order before the dispatch (permute) and, with several
  // experts on the GPU, regrouped by local expert after it (sort_chunks_by_idxs); after the
  // experts the same two in reverse, the last (unpermute) summing each token's copies into it.
  // A gather reads and writes every copy (2 C bytes, C = routed_tokens x top_k x h x e); the
  // unpermute reads them and writes the tokens (C + routed_tokens x h x e). B runs the
  // gradients through the same passes.
  if (moe.permute_copies) {
    const double copies = routed_tokens * k * h * e;
    const double gathers = local > 1 ? 3.0 : 1.0;  // permute, and the two regroupings
    const double bytes = gathers * 2.0 * copies + copies + routed_tokens * h * e;
    c.forward.memory.push_back({"moe_permute", bytes});
    c.backward_input.memory.push_back({"moe_permute_grad", bytes});
  }

  // All-to-all: every GPU dispatches its token copies (routed_tokens x top_k x h x e, the part
  // that stays local included) and combines them back; B has the two gradients.
  c.comm.a2a_bytes = routed_tokens * k * h * e;
  c.comm.a2a_count_forward = 2;
  c.comm.a2a_count_backward = 2;
}

void add_mla_attention(ComponentWork& c, const TransformerModel& m, const Dims& x) {
  // DeepSeek-V2/V3 (config.json: q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
  // v_head_dim): Q = up(norm(down(X))) or a full-rank projection; the compressed KV latent and
  // the shared RoPE key come from one down projection, K_nope and V from its up projection.
  // Down projections are replicated over TP ranks, up projections and the output split by heads.
  const MlaSpec& mla = *m.attention.mla;
  const double T = x.tokens(), h = x.h, e = x.e, ar = x.rank.heads;
  const double ql = static_cast<double>(mla.q_lora_rank);
  const double kvl = static_cast<double>(mla.kv_lora_rank);
  const double nope = static_cast<double>(mla.qk_nope_head_dim);
  const double rope = static_cast<double>(mla.qk_rope_head_dim);
  const double vd = static_cast<double>(mla.v_head_dim);
  const double qk = nope + rope;
  struct Linear {
    std::string name;
    double in, out;  // per-rank widths
    double split;    // t when split over TP ranks, 1 when replicated
  };
  std::vector<Linear> linears;
  if (ql > 0) {
    linears.push_back({"q_down", h, ql, 1.0});
    linears.push_back({"q_up", ql, ar * qk, x.t});
  } else {
    linears.push_back({"q", h, ar * qk, x.t});
  }
  linears.push_back({"kv_down", h, kvl + rope, 1.0});
  linears.push_back({"kv_up", kvl, ar * (nope + vd), x.t});
  linears.push_back({"attention_out", ar * vd, h, x.t});
  for (const Linear& l : linears) {
    c.forward.gemms.push_back({l.name, T, l.out, l.in});
    c.backward_input.gemms.push_back({l.name + "_dx", T, l.in, l.out});
    c.backward_weight.gemms.push_back({l.name + "_dw", l.in, l.out, T});
    c.parameters += l.in * l.out * l.split;
    c.parameters_per_gpu += l.in * l.out;
    c.parameters_activated += l.in * l.out * l.split;
  }
  const double latent_norms = ql + kvl;  // RMSNorm weights of the two latents
  c.parameters += latent_norms;
  c.parameters_per_gpu += latent_norms;
  c.parameters_activated += latent_norms;
  // FlashAttention with head dimension qk for Q K^T and vd for P V: forward 2 b a s^2 (qk + vd),
  // backward 2.5 times that (the 4 : 10 of layer_work.cpp); causal half.
  const double core = 2.0 * x.b * ar * x.q_len() * x.s * (qk + vd) * kCausalFraction;
  c.forward.attention_flops += core;
  c.backward_input.attention_flops += 2.5 * core;
  c.forward.attention_kernels += x.cp;  // as layer_work.cpp's FlashAttention launches
  c.backward_input.attention_kernels += 3.0 * x.cp;
  // Kept for B: the latents before and after their norms, Q, K (nope + rope per head), V and the
  // attention output.
  c.activation_bytes += T * e * (2.0 * (ql + kvl) + rope + 2.0 * ar * qk + 2.0 * ar * vd);
  // Kept from B until W: the projections' inputs (the normed hidden state once, the two normed
  // latents, the attention output) and their output gradients.
  c.weight_grad_bytes += e * (x.replicated.tokens * h + T * (ql + kvl + ar * vd) +
                              T * (ql + ar * qk + kvl + rope + ar * (nope + vd) + h));
}

}  // namespace bubblesim
