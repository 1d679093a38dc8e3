// Per-layer formulas against hand-computed values: Llama-3-8B (GQA, SwiGLU, FlashAttention,
// untied, no biases) and a GPT layer with standard attention (the published formulas), plus the
// tensor- and sequence-parallel splits of Korthikanti et al. 2022, eq. 2 and 5.
#include "sim/costmodel/layer_work.h"

#include <doctest/doctest.h>

using namespace bubblesim;

namespace {

TransformerModel llama3_8b() {
  TransformerModel m;
  m.layers = 32;
  m.hidden = 4096;
  m.attention.heads = 32;
  m.attention.kv_heads = 8;
  m.mlp.ffn_hidden = 14336;
  m.seq_len = 8192;
  m.embedding.vocab = 128256;
  m.mlp.kind = MlpKind::Swiglu;
  m.attention.kind = AttentionKind::Flash;
  m.embedding.tied = false;
  m.bias = false;
  m.dropout = false;
  return m;
}

TransformerModel gpt(std::int64_t h, std::int64_t a, std::int64_t s) {
  TransformerModel m;
  m.layers = 4;
  m.hidden = h;
  m.attention.heads = a;
  m.seq_len = s;
  m.embedding.vocab = 1000;
  m.attention.kind = AttentionKind::Standard;
  m.embedding.tied = true;  // GPT
  return m;
}

}  // namespace

TEST_CASE("Llama-3-8B: 8.03B parameters, per-layer FLOPs and bytes by hand") {
  const TransformerModel m = llama3_8b();
  const ComponentWork layer = transformer_layer_work(m, Sharding{});
  // Wq, Wo: h^2 = 16777216 each; Wk, Wv: h x (kv d) = 4096 x 1024 each; SwiGLU: 3 h f =
  // 176160768; two RMSNorms: 2h. 218112000 per layer.
  CHECK(layer.parameters == 218112000.0);
  // 32 layers + embedding and untied head (2 V h = 1050673152) + final norm (h).
  CHECK(model_parameters(m) == 8030261248.0);
  // F GEMMs: 2 b s [h (h + 2 kv d) + h h + 3 h f] = 2 x 8192 x 218103808; causal flash attention
  // 4 b a s^2 d / 2 = 549755813888.
  CHECK(layer.forward.gemm_flops() == 3573412790272.0);
  CHECK(layer.forward.attention_flops == 549755813888.0);
  CHECK(layer.forward.flops() == 4123168604160.0);
  // B: the same GEMMs (input gradients) + flash backward 10 b a s^2 d / 2.
  CHECK(layer.backward_input.flops() == 4947802324992.0);
  // W: the weight-gradient GEMMs only.
  CHECK(layer.backward_weight.flops() == 3573412790272.0);
  // Activations: norm inputs and the QKV / MLP inputs 4 s b h e = 268435456; Q, K, V and the
  // attention output s b (h + 2 kv d + h) e = 167772160; SwiGLU gate, up and product
  // 3 s b f e = 704643072; flash's fp32 log-sum-exp 4 a s b = 1048576.
  CHECK(layer.activation_bytes == 1141899264.0);
  // Selective recompute under flash drops both norm outputs 2 s b h e = 134217728 and the SwiGLU
  // product s b f e = 234881024.
  CHECK(layer.selective_bytes == 369098752.0);
  // Kept until W: inputs and output gradients of the four linear layers:
  // e s b (h + (h + 2 kv d) + h + h + h + 2f + f + h) = 1140850688.
  CHECK(layer.weight_grad_bytes == 1140850688.0);
  CHECK(layer.input_bytes == 8192.0 * 4096 * 2);
}

TEST_CASE("GPT with standard attention: the published formulas") {
  const TransformerModel m = gpt(1024, 16, 2048);
  const ComponentWork layer = transformer_layer_work(m, Sharding{});
  const double b = 1, s = 2048, h = 1024, a = 16;
  CHECK(layer.forward.flops() == b * s * h * (24 * h + 4 * s));         // Narayanan et al.
  CHECK(layer.backward_input.flops() == b * s * h * (24 * h + 8 * s));  // ZB Table 1
  CHECK(layer.backward_weight.flops() == 24 * b * s * h * h);
  CHECK(layer.activation_bytes == s * b * (34 * h + 5 * a * s));  // Korthikanti eq. 1
  CHECK(layer.selective_bytes == 5 * a * s * s * b);              // what selective drops
  CHECK(layer.weight_grad_bytes == 32 * s * b * h);               // ZB Table 1
  CHECK(layer.parameters == 12 * h * h + 13 * h);
}

TEST_CASE("the variants change what their formulas say") {
  TransformerModel m = gpt(1024, 16, 2048);
  const double s = 2048, h = 1024, a = 16;
  const ComponentWork standard = transformer_layer_work(m, Sharding{});
  m.attention.kind = AttentionKind::Flash;
  const ComponentWork flash = transformer_layer_work(m, Sharding{});
  // Flash keeps no s^2 tensors, only a fp32 log-sum-exp per head and row.
  CHECK(standard.activation_bytes - flash.activation_bytes == 5 * a * s * s - 4 * a * s);
  CHECK(flash.forward.attention_flops == 2 * s * s * h);
  m.attention.kv_heads = 4;  // GQA: K and V shrink to kv d columns
  const ComponentWork gqa = transformer_layer_work(m, Sharding{});
  CHECK(flash.parameters - gqa.parameters == 2 * h * (h - 4 * 64) + 2 * (h - 4 * 64));
  CHECK(flash.activation_bytes - gqa.activation_bytes == 2 * 2 * s * (h - 4 * 64));
  m.attention.kv_heads = 0;
  m.mlp.kind = MlpKind::Swiglu;
  m.mlp.ffn_hidden = 2816;  // SwiGLU: three h x f matrices
  const ComponentWork swiglu = transformer_layer_work(m, Sharding{});
  CHECK(swiglu.parameters == 4 * h * h + 3 * h * 2816 + (3 * h + h + 2 * 2816 + h) + 4 * h);
  CHECK(swiglu.forward.gemm_flops() == 2 * s * (4 * h * h + 3 * h * 2816));
}

TEST_CASE("tensor parallelism with and without sequence parallelism (Korthikanti eq. 2, 5)") {
  const TransformerModel m = gpt(1024, 16, 2048);
  const double s = 2048, h = 1024, a = 16, t = 4;
  const ComponentWork tp = transformer_layer_work(m, Sharding{4, false});
  const ComponentWork sp = transformer_layer_work(m, Sharding{4, true});
  CHECK(tp.activation_bytes == doctest::Approx(s * h * (10 + 24 / t + 5 * a * s / (h * t))));
  CHECK(sp.activation_bytes == doctest::Approx(s * h * (34 / t + 5 * a * s / (h * t))));
  CHECK(tp.forward.flops() == doctest::Approx(s * h * (24 * h + 4 * s) / t));
  CHECK(tp.comm.tp_allreduce_forward == 2);
  CHECK(tp.comm.tp_collective_bytes == s * h * 2);
  // Norms and the row-parallel biases stay whole on every rank.
  CHECK(tp.parameters_per_gpu == 12 * h * h / t + (3 * h + 4 * h) / t + 2 * h + 4 * h);
}

TEST_CASE("sequence parallelism: per-op memory of a split backward, inputs re-gathered or kept") {
  TransformerModel m = gpt(1024, 16, 2048);
  m.attention.kind = AttentionKind::Flash;
  const double s = 2048, h = 1024, a = 16, t = 4;
  Sharding sh{4, true};
  const ComponentWork regather = transformer_layer_work(m, sh);
  sh.sp_wgrad_input = SpWgradInput::Keep;
  const ComponentWork keep = transformer_layer_work(m, sh);
  const ComponentWork no_sp = transformer_layer_work(m, Sharding{4, false});
  // F keeps Korthikanti's eq. 5 without the s^2 terms (34 s b h / t), plus flash's fp32
  // log-sum-exp per head and row: +M_B.
  const double m_b = s * h * 34 / t + 4 * (a / t) * s;
  CHECK(regather.activation_bytes == doctest::Approx(m_b));
  CHECK(keep.activation_bytes == regather.activation_bytes);
  // Kept for W, 2 bytes an element: the column-parallel inputs (QKV, MLP up: h each; the T/t
  // shard when W re-gathers, all T rows when kept), the TP-split widths (QKV dY 3h, attention-out
  // input h, MLP-up dY 4h, MLP-down input 4h: 12 h / t) and the row-parallel output gradients
  // (attention out, MLP down: h each, all T rows).
  const double m_w_regather = 2 * s * (2 * h / t + 12 * h / t + 2 * h);
  const double m_w_keep = 2 * s * (2 * h + 12 * h / t + 2 * h);
  CHECK(regather.weight_grad_bytes == doctest::Approx(m_w_regather));
  CHECK(keep.weight_grad_bytes == doctest::Approx(m_w_keep));
  // Without SP the inputs are whole anyway: the same as keeping them.
  CHECK(no_sp.weight_grad_bytes == keep.weight_grad_bytes);
  // So a split B ends holding more than F left it: B's delta M_W - M_B is positive
  // (28/t + 4 - 34/t = 2.5 s b h here, less the log-sum-exp), W's is -M_W.
  CHECK(regather.weight_grad_bytes - regather.activation_bytes ==
        doctest::Approx(s * h * 2.5 - 4 * (a / t) * s));
  CHECK(no_sp.weight_grad_bytes < no_sp.activation_bytes);
}

TEST_CASE("the LM head and loss: logits GEMMs and the fp32 cross-entropy") {
  const TransformerModel m = gpt(1024, 16, 2048);
  const double s = 2048, h = 1024, v = 1000;
  const ComponentWork head = lm_head_work(m, Sharding{});
  CHECK(head.forward.gemm_flops() == 2 * s * h * v);
  CHECK(head.backward_input.gemm_flops() == 2 * s * h * v);
  CHECK(head.backward_weight.gemm_flops() == 2 * s * h * v);
  // bf16 -> fp32 (2 + 4), max 4, subtract 8, exp 8, sum 4, divide 8 bytes per logit; the final
  // norm reads and writes s b h.
  CHECK(head.forward.memory_bytes() == 38 * s * v + 2 * 2 * s * h);
  // Scale the softmax (8), cast back (4 + 2); the final norm's backward 3 s b h.
  CHECK(head.backward_input.memory_bytes() == 14 * s * v + 3 * 2 * s * h);
  // Korthikanti sec. 4.3: norm input, head input and the fp32 softmax 4 s b V.
  CHECK(head.activation_bytes == 2 * s * h + 2 * s * h + 4 * s * v);
  CHECK(head.weight_grad_bytes == 2 * s * h + 2 * s * v);
  CHECK(head.parameters == 2 * h);  // tied: the matrix is the embedding's
}

TEST_CASE("model.cross_entropy: the loss kernel's bytes per logit and what it keeps") {
  TransformerModel m = gpt(1024, 16, 2048);
  const double s = 2048, h = 1024, v = 1000;
  const double norm_f = 2 * 2 * s * h, norm_b = 3 * 2 * s * h, kept_inputs = 2 * 2 * s * h;
  m.kernels.cross_entropy = CrossEntropyKind::Half;  // the five passes in bf16: 8e F, 2e B, e kept
  ComponentWork half = lm_head_work(m, Sharding{});
  CHECK(half.forward.memory_bytes() == 16 * s * v + norm_f);
  CHECK(half.backward_input.memory_bytes() == 4 * s * v + norm_b);
  CHECK(half.activation_bytes == kept_inputs + 2 * s * v);
  m.kernels.cross_entropy = CrossEntropyKind::Fused;  // online max/sum (e) + gradient in place (2e)
  ComponentWork fused = lm_head_work(m, Sharding{});
  CHECK(fused.forward.memory_bytes() == 6 * s * v + norm_f);
  CHECK(fused.backward_input.memory_bytes() == 4 * s * v + norm_b);
  CHECK(fused.activation_bytes == kept_inputs + 2 * s * v);
  // The GEMMs do not depend on the loss kernel.
  CHECK(fused.forward.gemm_flops() == 2 * s * h * v);
}
