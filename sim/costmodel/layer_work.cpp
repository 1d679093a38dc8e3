#include "sim/costmodel/layer_work.h"

#include <fmt/format.h>

#include <span>

#include "sim/costmodel/framework_kernels.h"
#include "sim/costmodel/layer_dims.h"
#include "sim/costmodel/op_checkpoint.h"

namespace bubblesim {

double PassWork::gemm_flops() const {
  double total = 0;
  for (const GemmWork& g : gemms) total += g.flops();
  return total;
}

double PassWork::memory_bytes() const {
  double total = 0;
  for (const MemoryWork& m : memory) total += m.bytes;
  return total;
}

double PassWork::launches() const {
  double total = static_cast<double>(gemms.size()) + attention_kernels;
  for (const MemoryWork& m : memory) total += m.kernels;
  return total;
}

void PassWork::add(const PassWork& other) {
  gemms.insert(gemms.end(), other.gemms.begin(), other.gemms.end());
  attention_flops += other.attention_flops;
  attention_kernels += other.attention_kernels;
  if (!(attention_key_len > 0)) {
    attention_head_dim = other.attention_head_dim;
    attention_key_len = other.attention_key_len;
  }
  memory.insert(memory.end(), other.memory.begin(), other.memory.end());
}

namespace {

struct CrossEntropyBytes {
  double forward, backward, kept;            // bytes per logit: F's passes, B's passes, kept F -> B
  double forward_kernels, backward_kernels;  // one per pass named below
};

CrossEntropyBytes cross_entropy_bytes(CrossEntropyKind kind, double e) {
  switch (kind) {
    case CrossEntropyKind::Half:
      // Megatron's passes in the logits' own dtype (--fp16-lm-cross-entropy): max (e), subtract
      // (2e), exp (2e), sum (e), divide (2e); B scales the saved softmax in place (2e).
      return {8.0 * e, 2.0 * e, e, 5.0, 1.0};
    case CrossEntropyKind::Fused:
      // One kernel (Megatron --cross-entropy-loss-fusion, Liger): an online max and sum over the
      // logits (e), then the gradient written over them (2e); B scales it in place (2e). What
      // is kept is that gradient, in place of the logits.
      return {3.0 * e, 2.0 * e, e, 1.0, 1.0};
    case CrossEntropyKind::Fp32:
      break;
  }
  // Megatron's default on `logits.float()` (megatron/core/tensor_parallel/cross_entropy.py): F
  // reads the 16-bit logits and writes fp32 (e + 4), max (4), subtract max (8), exp in place
  // (8), sum (4), divide by the sum in place (8); B scales the saved fp32 softmax by the loss
  // gradient in place (8) and casts it back to the GEMM dtype (4 + e).
  const double cast = e < 4.0 ? e + 4.0 : 0.0;
  const double casts = e < 4.0 ? 1.0 : 0.0;
  return {cast + 32.0, 8.0 + cast, 4.0, 5.0 + casts, 1.0 + casts};
}

/// The pass that sums the bias gradients (`model.bias_grad`).
PassWork& bias_grad_pass(ComponentWork& c, const TransformerModel& m) {
  return m.kernels.bias_grad == BiasGradPass::BackwardWeight ? c.backward_weight : c.backward_input;
}

/// Megatron's unfused core attention (megatron/model/transformer.py, CoreAttention) between its
/// GEMMs, T tokens: F adds the QKV bias in its own kernel (the QKV linear does not skip its bias
/// add, the others fuse theirs into bias-GeLU and bias-dropout-add): read and write T x qkv; the
/// context [b a s d] is permuted to [s b a d] with .contiguous(): read and write T x core. B
/// copies the context gradient back to the bmm layout (T x core), scales dQ and dK by baddbmm's
/// alpha = 1/sqrt(d) (autograd multiplies each per-head gradient: 2 x T x core), and
/// concatenates dQ, dK, dV into the QKV output gradient (torch.split's backward: T x qkv).
void add_attention_glue(ComponentWork& c, const TransformerModel& m, const Dims& x,
                        double qkv_width, double core_width) {
  const double T = x.tokens(), e = x.e;
  if (m.bias) c.forward.memory.push_back({"qkv_bias_add", 2.0 * T * qkv_width * e});
  c.forward.memory.push_back({"context_permute", 2.0 * T * core_width * e});
  c.backward_input.memory.push_back({"context_permute_grad", 2.0 * T * core_width * e});
  c.backward_input.memory.push_back({"qk_scale_grad", 2.0 * 2.0 * T * core_width * e, 2.0});
  c.backward_input.memory.push_back({"qkv_grad_concat", 2.0 * T * qkv_width * e});
}

}  // namespace

Dims dims_of(const TransformerModel& m, const Sharding& sh) {
  Dims x{};
  x.b = static_cast<double>(m.micro_batch_size);
  x.s = static_cast<double>(m.seq_len);
  x.h = static_cast<double>(m.hidden);
  x.a = static_cast<double>(m.attention.heads);
  x.kv = static_cast<double>(m.kv());
  x.d = static_cast<double>(m.head_dim());
  x.f = static_cast<double>(m.ffn());
  x.v = static_cast<double>(m.embedding.vocab);
  x.e = static_cast<double>(m.dtype.bytes);
  x.t = static_cast<double>(sh.tp);
  x.cp = static_cast<double>(sh.cp);
  x.replicated.tokens = sh.sp ? x.tokens() / x.t : x.tokens();
  x.rank.heads = x.a / x.t;
  x.rank.kv = m.kv() >= sh.tp ? x.kv / x.t : 1.0;
  x.rank.ffn = x.f / x.t;
  x.rank.up_width = (m.mlp.kind == MlpKind::Swiglu ? 2.0 : 1.0) * x.rank.ffn;
  x.replicated.hidden_bytes = x.replicated.tokens * x.h * x.e;
  x.wgrad_input_tokens =
      sh.sp && sh.sp_wgrad_input == SpWgradInput::Regather ? x.replicated.tokens : x.tokens();
  x.dropout = m.dropout;
  x.replicated.mask_bytes = m.dropout ? x.replicated.tokens * x.h : 0.0;
  return x;
}

double mlp_parameters(const TransformerModel& m, double width) {
  const bool swiglu = m.mlp.kind == MlpKind::Swiglu;
  const double h = static_cast<double>(m.hidden);
  return (swiglu ? 3.0 : 2.0) * h * width + (m.bias ? (swiglu ? 2.0 : 1.0) * width + h : 0.0);
}

void add_mlp(ComponentWork& c, const TransformerModel& m, const Dims& x, const MlpBlock& mb) {
  // Column-parallel up (and gate), row-parallel down; F: Y = X W, B: dX = dY W^T, W: dW = X^T dY.
  const bool swiglu = m.mlp.kind == MlpKind::Swiglu;
  const double R = mb.rows, h = x.h, e = x.e, up = (swiglu ? 2.0 : 1.0) * mb.width;
  const std::string name = mb.name;
  struct Linear {
    std::string name;
    double in, out;
  };
  for (const Linear& l : {Linear{name + "_up", h, up}, Linear{name + "_down", mb.width, h}}) {
    c.forward.gemms.push_back({l.name, R, l.out, l.in, mb.groups});
    c.backward_input.gemms.push_back({l.name + "_dx", R, l.in, l.out, mb.groups});
    c.backward_weight.gemms.push_back({l.name + "_dw", l.in, l.out, R, mb.groups});
    if (m.bias)
      bias_grad_pass(c, m).memory.push_back({l.name + "_bias_grad", R * l.out * e * mb.groups});
  }
  // The activation (activation_kernel_bytes: fused or one kernel per operation), kept for B
  // (GeLU: its input and output; SwiGLU: gate, up and the product).
  const double act_elems = R * mb.width * mb.groups;
  const ActivationBytes act = activation_kernel_bytes(m.mlp.kind, m.kernels.activation_fusion, e);
  c.forward.memory.push_back({name + "_activation", act.forward * act_elems, act.forward_kernels});
  c.backward_input.memory.push_back(
      {name + "_activation_grad", act.backward * act_elems, act.backward_kernels});
  c.activation_bytes += ((swiglu ? 3.0 : 2.0) + act.extra_kept) * act_elems * e;
  if (m.attention.kind == AttentionKind::Flash) {
    // Selective recompute under FlashAttention redoes the activation function in B and does not
    // keep its output (the down GEMM's input).
    c.selective_recompute.memory.push_back(
        {name + "_activation", act.forward * act_elems, act.forward_kernels});
    c.selective_bytes += act_elems * e;
  }
  if (mb.keeps_input) c.activation_bytes += R * mb.groups * h * e;
  // Kept from B until W: each GEMM's input and output gradient (the up GEMM's input is the
  // layer's normed hidden state, wgrad_input_tokens rows under SP, unless dispatched tokens).
  const double up_input = mb.keeps_input     ? mb.groups * R * h
                          : mb.input_counted ? 0.0
                                             : x.wgrad_input_tokens * h;
  c.weight_grad_bytes += e * (up_input + mb.groups * (R * up + R * mb.width + R * h));
  c.parameters += mb.parameters;
  c.parameters_per_gpu += mb.parameters_per_gpu;
  c.parameters_activated += mb.parameters_activated;
}

ComponentWork transformer_layer_work(const TransformerModel& m, const Sharding& sh,
                                     bool moe_layer) {
  const Dims x = dims_of(m, sh);
  const double T = x.tokens(), h = x.h, d = x.d, e = x.e;
  const double qkv_width = (x.rank.heads + 2.0 * x.rank.kv) * d;  // Q, K, V columns on this rank
  const double core_width = x.rank.heads * d;                     // attention output columns
  const double H = x.replicated.hidden_bytes, M = x.replicated.mask_bytes;
  ComponentWork c;

  // Attention's linear layers (Megatron: QKV column-parallel, attention-out row-parallel). F: Y =
  // X W; B: dX = dY W^T; W: dW = X^T dY (same FLOPs each). MLA has its own (moe_work.cpp).
  struct Linear {
    const char* name;
    double in, out;  // per-rank widths
  };
  const Linear linears[] = {{"qkv", h, qkv_width}, {"attention_out", core_width, h}};
  for (const Linear& l :
       m.attention.mla ? std::span<const Linear>() : std::span<const Linear>(linears)) {
    c.forward.gemms.push_back({l.name, T, l.out, l.in});
    c.backward_input.gemms.push_back({std::string(l.name) + "_dx", T, l.in, l.out});
    c.backward_weight.gemms.push_back({std::string(l.name) + "_dw", l.in, l.out, T});
    if (m.bias)
      bias_grad_pass(c, m).memory.push_back({std::string(l.name) + "_bias_grad", T * l.out * e});
  }

  // Attention core, heads_rank heads of dimension d per GPU.
  const double batch = x.b * x.rank.heads;
  const double scores = batch * x.s * x.s;  // elements of one s x s score tensor per rank
  PassWork core;
  if (m.attention.mla) {
    add_mla_attention(c, m, x);
  } else if (m.attention.kind == AttentionKind::Standard) {
    // Megatron's unfused path: two batched GEMMs forward (QK^T, attention x V), four backward;
    // a fused scale-mask-softmax and a dropout over the scores (Korthikanti et al. 2022, sec. 4.1).
    core.gemms.push_back({"qk", x.s, x.s, d, batch, false});
    core.gemms.push_back({"attention_v", x.s, d, x.s, batch, false});
    core.memory.push_back({"softmax", 2.0 * scores * e});
    if (x.dropout) core.memory.push_back({"attention_dropout", scores * (2.0 * e + 1.0)});
    for (const char* g : {"dv", "dp", "dq", "dk"}) {
      const bool scores_out = std::string(g) == "dp";
      c.backward_input.gemms.push_back(
          {g, x.s, scores_out ? x.s : d, scores_out ? d : x.s, batch, false});
    }
    if (x.dropout)
      c.backward_input.memory.push_back({"attention_dropout_grad", scores * (2.0 * e + 1.0)});
    c.backward_input.memory.push_back({"softmax_grad", 3.0 * scores * e});
    c.selective_bytes = scores * (x.dropout ? 2.0 * e + 1.0 : e);
    if (m.kernels.glue_kernels) add_attention_glue(c, m, x, qkv_width, core_width);
  } else {
    // FlashAttention-2: forward QK^T and PV (4 b a s^2 d FLOPs), backward recomputes QK^T and
    // computes dV, dP, dQ, dK (10 b a s^2 d); causal blocks above the diagonal skipped (Dao 2023).
    // Under context parallelism a GPU's s / cp queries meet all s keys over the ring, and the
    // load-balanced chunks (chunks i and 2 cp - 1 - i on rank i) keep half of them causal.
    core.attention_flops = 4.0 * batch * x.q_len() * x.s * d * kCausalFraction;
    c.backward_input.attention_flops = 10.0 * batch * x.q_len() * x.s * d * kCausalFraction;
    // Launches: one forward kernel; the backward's three (dot(dO, O), the dQ dK dV loop, the
    // dQ conversion: flash_bwd_launch_template.h); each ring step of CP calls them again.
    core.attention_kernels = x.cp;
    c.backward_input.attention_kernels = 3.0 * x.cp;
    // Each call: the head dimension and the keys it meets: one block of s / cp under CP (the
    // ring's steps, and PyTorch's loop over the gathered blocks), the whole gathered sequence
    // where the all-gather is not overlapped (one call, as the Llama 3 paper runs it).
    const bool one_call =
        sh.cp_exchange.algorithm == CpAlgorithm::AllGather && !sh.cp_exchange.overlap;
    for (PassWork* p : {&core, &c.backward_input}) {
      p->attention_head_dim = d;
      p->attention_key_len = one_call ? x.s : x.s / x.cp;
    }
    c.selective_bytes = 0;
    if (sh.cp > 1) {
      c.comm.cp_kv_bytes = 2.0 * x.b * x.q_len() * x.rank.kv * d * e;
      c.comm.cp_steps = x.cp - 1.0;
    }
  }
  c.forward.add(core);
  if (m.attention.kind == AttentionKind::Standard) c.selective_recompute = core;

  // Memory-bound kernels of the replicated region (H per hidden-size tensor): two norms, two
  // residual adds (framework_kernels.cpp, by model.norm_fusion); the rotary embedding of Q and K
  // and the K, V copies of grouped-query attention where the framework makes them.
  add_norms_and_residuals(c, m, x);
  if (!m.attention.mla) {
    add_rope(c, m, x, core_width, x.rank.kv * d);
    if (m.attention.kind == AttentionKind::Flash) add_gqa_repeat(c, m, x);
  }

  // Activations kept from F to B (Korthikanti et al. 2022, eq. 1-5, with the variants):
  // replicated region: both norm inputs, the QKV and MLP-up inputs (H each), two dropout masks;
  // split region: Q, K, V (K and V at kv_heads), the attention output (the MLP's activations are
  // add_mlp's); standard attention adds the scores (softmax output, dropout mask and output);
  // flash keeps a fp32 log-sum-exp per row.
  const double split =
      m.attention.mla ? 0.0 : T * e * (core_width + 2.0 * x.rank.kv * d + core_width);
  const double flash_lse = m.attention.kind == AttentionKind::Flash ? 4.0 * batch * x.q_len() : 0.0;
  const double core_scores = m.attention.kind == AttentionKind::Standard ? c.selective_bytes : 0.0;
  c.activation_bytes += 4.0 * H + 2.0 * M + split + core_scores + flash_lse;
  c.input_bytes = H;

  // Kept from B until W: each linear layer's input X and output gradient dY (Qi et al. 2023,
  // Table 1: 32 s b h for GPT at t = 1). Column-parallel inputs are the (gathered) normed hidden
  // state, wgrad_input_tokens rows under SP (the shard, or gathered); row-parallel output
  // gradients are full T x h (the all-gather of B's incoming shard; the ZB fork keeps it whole).
  const double col_input = x.wgrad_input_tokens * h;
  if (!m.attention.mla)
    c.weight_grad_bytes += e * (col_input + T * qkv_width + T * core_width + T * h);

  // Parameters: Wq, Wk, Wv, Wo, biases, two norms (MLA: its projections, moe_work.cpp), then the
  // MLP's (add_mlp).
  const double norm_params = 2.0 * (m.bias ? 2.0 * h : h);
  const double attention_params = m.attention.mla
                                      ? 0.0
                                      : h * (x.a * d) + 2.0 * h * x.kv * d + (x.a * d) * h +
                                            (m.bias ? (x.a + 2.0 * x.kv) * d + h : 0.0);
  const double attention_params_gpu =
      m.attention.mla ? 0.0 : h * qkv_width + core_width * h + (m.bias ? qkv_width + h : 0.0);
  c.parameters += attention_params + norm_params;
  c.parameters_per_gpu += attention_params_gpu + norm_params;
  c.parameters_activated += attention_params + norm_params;
  if (moe_layer) {
    add_moe_mlp(c, m, sh, x);
  } else {
    MlpBlock mlp{"mlp"};
    mlp.rows = T;
    mlp.width = x.rank.ffn;
    mlp.parameters = mlp.parameters_activated = mlp_parameters(m, x.f);
    mlp.parameters_per_gpu = mlp_parameters(m, x.rank.ffn);  // the down bias is replicated
    add_mlp(c, m, x, mlp);
  }

  // Megatron's block: an all-reduce after attention-out and after MLP-down in F, and after the
  // QKV and MLP-up input gradients in B; with SP each is a reduce-scatter + all-gather pair.
  c.comm.tp_allreduce_forward = sh.tp > 1 ? 2 : 0;
  c.comm.tp_allreduce_backward = sh.tp > 1 ? 2 : 0;
  c.comm.tp_collective_bytes = T * h * e;
  if (!moe_layer && !m.attention.mla && m.attention.kind == AttentionKind::Flash)
    add_op_checkpoint(c, m, sh, x);
  return c;
}

ComponentWork embedding_work(const TransformerModel& m, const Sharding& sh) {
  const Dims x = dims_of(m, sh);
  const double T = x.tokens(), h = x.h, e = x.e, vr = x.v / x.t;
  ComponentWork c;
  if (m.embedding.vocab <= 0) return c;
  // Lookup: every rank gathers its vocabulary slice's rows and writes a full T x h output
  // (masked), then the TP all-reduce (or reduce-scatter) sums them; dropout on the result.
  // Launches: F.embedding alone at t = 1; under TP, Megatron's VocabParallelEmbedding.forward
  // (megatron/core/tensor_parallel/layers.py) also masks the ids outside its slice (two
  // comparisons and an or), shifts them (a clone and a subtraction), zeroes the masked ids and
  // the masked output rows: 8 kernels, all but the lookup over T ids only.
  c.forward.memory.push_back({"embedding_lookup", 2.0 * T * h * e, sh.tp > 1 ? 8.0 : 1.0});
  if (x.dropout)
    c.forward.memory.push_back(
        {"embedding_dropout", 2.0 * x.replicated.hidden_bytes + x.replicated.mask_bytes});
  if (x.dropout)
    c.backward_input.memory.push_back(
        {"embedding_dropout_grad", 2.0 * x.replicated.hidden_bytes + x.replicated.mask_bytes});
  // Weight gradient (in the autograd backward, B): zero a dense V/t x h gradient, scatter-add the
  // T rows, add it into the fp32 main gradient (read e + 4, write 4 bytes per element).
  c.backward_input.memory.push_back(
      {"embedding_weight_grad", vr * h * (e + e + 8.0) + 2.0 * T * h * e, 3.0});
  c.activation_bytes = x.replicated.mask_bytes;  // dropout mask only: token ids are not activations
  c.parameters = x.v * h;
  c.parameters_per_gpu = vr * h;
  // Activated (docs/moe.md): a token reads one row of the table, multiplies by none of it, so the
  // input embedding is not counted, as DeepSeek counts its 36.6B (README_WEIGHTS.md: "including
  // 0.9B for the output Head"); tied, the table is the LM head's weight and counts in full.
  c.parameters_activated = m.embedding.tied ? c.parameters : 0.0;
  // TP: F sums the ranks' partial lookups (all-reduce; with SP a reduce-scatter, whose backward
  // is an all-gather of the gradient).
  if (sh.tp > 1) {
    c.comm.tp_allreduce_forward = sh.sp ? 0.5 : 1.0;
    c.comm.tp_allreduce_backward = sh.sp ? 0.5 : 0.0;
  }
  c.comm.tp_collective_bytes = T * h * e;
  return c;
}

ComponentWork lm_head_work(const TransformerModel& m, const Sharding& sh) {
  const Dims x = dims_of(m, sh);
  const double T = x.tokens(), h = x.h, e = x.e, vr = x.v / x.t;
  const double H = x.replicated.hidden_bytes;
  ComponentWork c;
  // Final norm (always present with a vocabulary: the decoder's last normalisation).
  c.forward.memory.push_back({"final_norm", 2.0 * H});
  c.backward_input.memory.push_back({"final_norm_grad", 3.0 * H});
  c.parameters = m.bias ? 2.0 * h : h;
  c.parameters_per_gpu = c.parameters;
  c.parameters_activated = c.parameters;
  c.activation_bytes = H;
  c.input_bytes = H;
  if (m.embedding.vocab <= 0) return c;
  // Logits GEMM (2 b s h V / t per pass): F logits = X W^T, B dX = dlogits W, W dW = dlogits^T X.
  c.forward.gemms.push_back({"logits", T, vr, h, 1, false});
  c.backward_input.gemms.push_back({"logits_dx", T, h, vr, 1, false});
  c.backward_weight.gemms.push_back({"logits_dw", vr, h, T, 1, false});
  // The loss over N = T V / t logits (`model.cross_entropy`), memory-bound: bytes per logit.
  const double logits = T * vr;
  const CrossEntropyBytes ce = cross_entropy_bytes(m.kernels.cross_entropy, e);
  c.forward.memory.push_back({"cross_entropy", logits * ce.forward, ce.forward_kernels});
  c.backward_input.memory.push_back(
      {"cross_entropy_grad", logits * ce.backward, ce.backward_kernels});
  // Kept F -> B (Korthikanti et al. 2022, sec. 4.3): the final norm's and the head's inputs and
  // the fp32 softmax (4 b s V / t bytes). Kept B -> W: the head input and the logits gradient.
  const double head_input = x.replicated.tokens * h * e;
  c.activation_bytes = H + head_input + ce.kept * logits;
  c.weight_grad_bytes = x.wgrad_input_tokens * h * e + logits * e;
  if (!m.embedding.tied) {
    c.parameters += x.v * h;
    c.parameters_per_gpu += vr * h;
  }
  // TP: with SP the head's input is all-gathered in F and dX reduce-scattered in B (one pair);
  // without SP, dX is all-reduced in B (the input is already replicated).
  if (sh.tp > 1) {
    c.comm.tp_allreduce_forward = sh.sp ? 0.5 : 0.0;
    c.comm.tp_allreduce_backward = sh.sp ? 0.5 : 1.0;
  }
  c.comm.tp_collective_bytes = T * h * e;
  c.parameters_activated = c.parameters;
  return c;
}

namespace {

double count_parameters(const TransformerModel& m, bool activated) {
  const Sharding one;
  auto of = [&](const ComponentWork& c) {
    return activated ? c.parameters_activated : c.parameters;
  };
  const double moe = static_cast<double>(m.moe_layers());
  double total = of(transformer_layer_work(m, one)) * (static_cast<double>(m.layers) - moe);
  if (moe > 0) total += of(transformer_layer_work(m, one, true)) * moe;
  return total + of(embedding_work(m, one)) + of(lm_head_work(m, one));
}

}  // namespace

double model_parameters(const TransformerModel& m) { return count_parameters(m, false); }

double model_parameters_activated(const TransformerModel& m) { return count_parameters(m, true); }

std::string model_shape_error(const TransformerModel& m, std::int64_t tp) {
  if (m.attention.heads <= 0 || m.hidden % m.attention.heads != 0)
    return fmt::format("hidden size {} is not divisible by {} heads", m.hidden, m.attention.heads);
  if (m.attention.kv_heads > m.attention.heads ||
      (m.attention.kv_heads > 0 && m.attention.heads % m.attention.kv_heads != 0))
    return fmt::format("kv_heads {} must divide heads {} (GQA groups of equal size)",
                       m.attention.kv_heads, m.attention.heads);
  if (tp > 1) {
    if (m.attention.heads % tp != 0)
      return fmt::format("tensor parallelism {} must divide the {} heads", tp, m.attention.heads);
    if (m.kv() % tp != 0 && tp % m.kv() != 0)
      return fmt::format("tensor parallelism {} and kv_heads {}: one must divide the other", tp,
                         m.kv());
    if (m.ffn() % tp != 0)
      return fmt::format("tensor parallelism {} must divide ffn_hidden {}", tp, m.ffn());
  }
  if (m.moe && m.moe->top_k > m.moe->experts)
    return fmt::format("moe.top_k {} exceeds the {} routed experts", m.moe->top_k, m.moe->experts);
  if (m.attention.mla && m.attention.kind != AttentionKind::Flash)
    return "multi-head latent attention (model.mla) is modelled with attention: flash only";
  return "";
}

}  // namespace bubblesim
