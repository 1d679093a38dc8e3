// Model FLOPs (sim/costmodel/model_flops.h) against the published closed forms: Megatron's
// 72 s l h^2 (1 + s/12h + V/12lh) for a GPT model (SC21's eq. 3 with the causal half of its
// s/6h), Megatron-LM's num_floating_point_operations for GQA + SwiGLU (Llama) and for MoE.
#include "sim/costmodel/model_flops.h"

#include <doctest/doctest.h>

using namespace bubblesim;

namespace {

TransformerModel gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t seq,
                     std::int64_t vocab) {
  TransformerModel m;
  m.layers = layers;
  m.hidden = hidden;
  m.attention.heads = heads;
  m.seq_len = seq;
  m.embedding.vocab = vocab;
  return m;
}

/// Megatron-LM's num_floating_point_operations for one sequence (training.py): 12 s l h^2 times
/// the attention (its core's causal half: "Only half of the attention matrix is non-zero"), MLP,
/// shared-expert and logit terms.
double megatron_flops(const TransformerModel& m, double top_k, double shared_ffn) {
  const double h = static_cast<double>(m.hidden), s = static_cast<double>(m.seq_len),
               l = static_cast<double>(m.layers), a = static_cast<double>(m.attention.heads),
               g = static_cast<double>(m.kv()), f = static_cast<double>(m.ffn()),
               v = static_cast<double>(m.embedding.vocab);
  const double gated = m.mlp.kind == MlpKind::Swiglu ? 1.5 : 1.0;
  return 12.0 * s * l * h * h *
         ((1.0 + g / a + s / h / 2.0) + f / h * top_k * gated + shared_ffn / h * gated +
          v / (2.0 * l * h));
}

}  // namespace

TEST_CASE("a GPT model: Megatron's 72 s l h^2 (1 + s/12h + V/12lh) per sequence") {
  // GPT-3 175B as in Narayanan et al. (SC21) Table 1: l 96, h 12288, s 2048, V 51200.
  const TransformerModel m = gpt(96, 12288, 96, 2048, 51200);
  const double s = 2048, l = 96, h = 12288, v = 51200;
  const double sc21 = 72.0 * s * l * h * h * (1.0 + s / (12.0 * h) + v / (12.0 * l * h));
  CHECK(training_flops_per_sequence(m) == doctest::Approx(sc21).epsilon(1e-12));
  CHECK(training_flops_per_sequence(m) == doctest::Approx(megatron_flops(m, 1, 0)).epsilon(1e-12));
  // Three forwards: the backward costs two.
  CHECK(training_flops_per_sequence(m) ==
        doctest::Approx(3.0 * s * forward_flops_per_token(m)).epsilon(1e-12));
}

TEST_CASE("Llama-3-70B (GQA, SwiGLU): Megatron-LM's formula, about 6N + attention") {
  TransformerModel m = gpt(80, 8192, 64, 8192, 128256);
  m.attention.kv_heads = 8;
  m.mlp = {28672, MlpKind::Swiglu};
  const double ours = training_flops_per_sequence(m);
  CHECK(ours == doctest::Approx(megatron_flops(m, 1, 0)).epsilon(1e-12));
  // 6N per token with N = 69.5e9 weights a token multiplies (70.6e9 less the 1.05e9 input
  // embedding), plus the attention core's causal half 6 l s h: 3.74e15 FLOPs per sequence of
  // 8192.
  const double n =
      80.0 * (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672) + 8192.0 * 128256;
  CHECK(n == doctest::Approx(69.5e9).epsilon(0.01));
  CHECK(ours == doctest::Approx(8192.0 * (6.0 * n + 6.0 * 80 * 8192 * 8192)).epsilon(1e-12));
}

TEST_CASE("MoE: a token's top_k routed and shared experts, dense layers their own MLP") {
  TransformerModel m = gpt(4, 2048, 16, 2048, 32000);
  m.mlp.kind = MlpKind::Swiglu;
  m.moe = MoeSpec{};
  m.moe->experts = 16;
  m.moe->top_k = 4;
  m.moe->expert_ffn_hidden = 1024;
  m.moe->shared_experts = 1;
  // Every layer a MoE layer: Megatron-LM's formula with ffn = the expert's and a shared expert.
  TransformerModel as_megatron = m;
  as_megatron.mlp.ffn_hidden = 1024;
  CHECK(training_flops_per_sequence(m) ==
        doctest::Approx(megatron_flops(as_megatron, 4, 1024)).epsilon(1e-12));
  // A dense first layer costs its own MLP instead.
  TransformerModel dense_first = m;
  dense_first.moe->dense_layers = 1;
  const double per_token_gap = 2.0 * 3.0 * 2048 * (4.0 * 2048 - 5.0 * 1024);
  CHECK(training_flops_per_sequence(dense_first) - training_flops_per_sequence(m) ==
        doctest::Approx(3.0 * 2048 * per_token_gap).epsilon(1e-9));
}

TEST_CASE("the split: the linear GEMMs apart from the attention core and the LM head") {
  // GPT-3 175B: per token per layer the linear GEMMs are 12 h^2 multiply-accumulates, the core's
  // causal half s h, the LM head h V; training is 3 forwards of 2 FLOPs per multiply-accumulate.
  const TransformerModel m = gpt(96, 12288, 96, 2048, 51200);
  const double s = 2048, l = 96, h = 12288, v = 51200;
  const ModelFlops split = training_flops_split(m);
  CHECK(split.linear == doctest::Approx(6.0 * s * l * 12.0 * h * h).epsilon(1e-12));
  CHECK(split.other == doctest::Approx(6.0 * s * (l * s * h + h * v)).epsilon(1e-12));
  CHECK(split.total() == doctest::Approx(training_flops_per_sequence(m)).epsilon(1e-12));
  // At the GPU's peaks: the linear FLOPs at the FP8 peak under fp8_linear, the rest at the dtype's.
  GpuSpec gpu;
  gpu.flops = FlopRate::flops_per_second(1e15);
  gpu.flops_fp8 = FlopRate::flops_per_second(2e15);
  CHECK(*seconds_at_peak(m, gpu) == doctest::Approx(split.total() / 1e15).epsilon(1e-12));
  TransformerModel fp8 = m;
  fp8.fp8_linear = true;
  CHECK(*seconds_at_peak(fp8, gpu) ==
        doctest::Approx(split.linear / 2e15 + split.other / 1e15).epsilon(1e-12));
}
