// The kernels a framework's code makes of a Llama layer (docs/models.md, "Frameworks"), counted by
// hand: PyTorch's composite RMSNorm, torch.compile's norm fused with the residual add, the rotary
// embedding three ways, the K, V heads repeated for GQA, eager SwiGLU; and the published rate of
// the attention kernel a framework calls (first_principles.attention_kernels).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_reader.h"
#include "sim/costmodel/op_timing.h"

using namespace bubblesim;

namespace {

// A Llama-shaped layer: h 64, 8 heads of 8, 2 KV heads, f 128 (SwiGLU), s 32, b 2 (T = 64), no
// biases or dropout, bf16 (e = 2).
TransformerModel small_llama() {
  TransformerModel m;
  m.layers = 2;
  m.hidden = 64;
  m.attention.heads = 8;
  m.attention.kv_heads = 2;
  m.mlp.ffn_hidden = 128;
  m.mlp.kind = MlpKind::Swiglu;
  m.seq_len = 32;
  m.micro_batch_size = 2;
  m.bias = false;
  m.dropout = false;
  return m;
}

const MemoryWork* find(const PassWork& w, const std::string& name) {
  for (const MemoryWork& m : w.memory)
    if (m.name == name) return &m;
  return nullptr;
}

double bytes_of(const PassWork& w, const std::string& name) {
  const MemoryWork* m = find(w, name);
  return m ? m->bytes : 0.0;
}

std::optional<GpuSpec> gpu_of(const std::string& yaml, const TransformerModel* model,
                              DiagnosticList& d) {
  YamlDocument doc = YamlDocument::load_string(yaml, "gpu.yaml", d);
  return read_gpu_spec(doc.root().child("gpu"), model, d);
}

}  // namespace

TEST_CASE("norm_fusion: one kernel, PyTorch's composite RMSNorm, torch.compile's residual fusion") {
  TransformerModel m = small_llama();
  const double H = 64.0 * 64.0 * 2.0;  // one hidden tensor: T h e = 8192 bytes
  const ComponentWork fused = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(fused.forward, "norms") == 2 * 2 * H);  // two norms: read x, write y
  CHECK(bytes_of(fused.backward_input, "norms_grad") == 2 * 3 * H);
  CHECK(bytes_of(fused.forward, "residual_adds") == 2 * 3 * H);  // read two, write one, twice
  // Composite: 28 + 4e = 36 bytes an element in 8 kernels, 52 + 6e = 64 back in 10, per norm.
  m.kernels.norm_fusion = NormFusion::Composite;
  const ComponentWork composite = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(composite.forward, "norms") == 2 * 36 * 64 * 64);
  CHECK(find(composite.forward, "norms")->kernels == 16);
  CHECK(bytes_of(composite.backward_input, "norms_grad") == 2 * 64 * 64 * 64);
  CHECK(find(composite.backward_input, "norms_grad")->kernels == 20);
  // A LayerNorm (a model with biases) is one kernel in every framework: composite leaves it.
  TransformerModel gpt = m;
  gpt.bias = true;
  CHECK(bytes_of(transformer_layer_work(gpt, Sharding{}).forward, "norms") == 2 * 2 * H);
  // torch.compile: the attention's residual add and the MLP norm in one kernel, H fewer in F
  // (4H for 3H + 2H) and 2H fewer in B (4H for 3H + 3H), one kernel fewer each.
  m.kernels.norm_fusion = NormFusion::WithResidual;
  const ComponentWork compiled = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(compiled.forward, "residual_adds") == 2 * 3 * H - H);
  CHECK(bytes_of(compiled.backward_input, "residual_grads") == 2 * 3 * H - 2 * H);
  CHECK(compiled.forward.launches() == fused.forward.launches() - 1);
}

TEST_CASE("rope: fused, torchtitan's complex multiply in fp32, Hugging Face's rotate_half") {
  TransformerModel m = small_llama();
  CHECK(bytes_of(transformer_layer_work(m, Sharding{}).forward, "rope") == 0.0);  // no RoPE
  m.attention.rope = true;
  // Q: 8 heads of 8, K: 2 heads of 8: 80 elements a token, 64 tokens.
  const double elements = 64.0 * 80.0;
  const ComponentWork fused = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(fused.forward, "rope") == 4 * elements);  // read and write, e = 2
  CHECK(bytes_of(fused.backward_input, "rope_grad") == 4 * elements);
  CHECK(find(fused.forward, "rope")->kernels == 2);  // Q and K
  m.kernels.rope_fusion = RopeFusion::Complex;
  const ComponentWork complex = transformer_layer_work(m, Sharding{});
  // .float() (2 + 4), the complex multiply (4 + 4), .type_as (4 + 2): 20 bytes, 3 kernels each.
  CHECK(bytes_of(complex.forward, "rope") == 20 * elements);
  CHECK(find(complex.forward, "rope")->kernels == 6);
  m.kernels.rope_fusion = RopeFusion::RotateHalf;
  const ComponentWork half = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(half.forward, "rope") == 10 * 2 * elements);  // 10e in 5 kernels
  CHECK(bytes_of(half.backward_input, "rope_grad") == 14 * 2 * elements);
}

TEST_CASE("gqa_repeat and eager SwiGLU: the copies and the tensor autograd keeps") {
  TransformerModel m = small_llama();
  const ComponentWork plain = transformer_layer_work(m, Sharding{});
  m.kernels.gqa_repeat = true;
  const ComponentWork repeated = transformer_layer_work(m, Sharding{});
  // K and V read at 2 heads (2 x 64 x 16 x 2 bytes) and written at 8 (2 x 64 x 64 x 2).
  const double small = 2.0 * 64 * 16 * 2, big = 2.0 * 64 * 64 * 2;
  CHECK(bytes_of(repeated.forward, "gqa_repeat") == small + big);
  CHECK(bytes_of(repeated.backward_input, "gqa_repeat_grad") == small + big);
  // The attention kernel keeps the repeated K and V for B, not the grouped ones.
  CHECK(repeated.activation_bytes - plain.activation_bytes == big - small);
  // Eager SwiGLU: silu (2e) and the multiply (3e) in F; the multiply's two gradients and
  // silu_backward (3e each) in B; silu's output kept too (T x f more).
  m = small_llama();
  m.kernels.activation_fusion = ActivationFusion::Eager;
  const ComponentWork eager = transformer_layer_work(m, Sharding{});
  const double tf = 64.0 * 128.0;
  CHECK(bytes_of(eager.forward, "mlp_activation") == 10 * tf);
  CHECK(bytes_of(eager.backward_input, "mlp_activation_grad") == 18 * tf);
  CHECK(eager.activation_bytes - plain.activation_bytes == 2 * tf);
  // Eager GeLU is one aten kernel each way: the fused kernel's bytes.
  TransformerModel gelu = small_llama();
  gelu.mlp.kind = MlpKind::Gelu;
  const double fused_gelu =
      bytes_of(transformer_layer_work(gelu, Sharding{}).forward, "mlp_activation");
  gelu.kernels.activation_fusion = ActivationFusion::Eager;
  CHECK(bytes_of(transformer_layer_work(gelu, Sharding{}).forward, "mlp_activation") == fused_gelu);
}

TEST_CASE("attention_kernels: the published rate by head dimension and length, held at the ends") {
  TransformerModel m = small_llama();
  m.kernels.attention_backend = "fa3";
  DiagnosticList d;
  auto h100 = gpu_of("gpu: {preset: h100-sxm}\n", &m, d);
  INFO(d.size());
  REQUIRE(h100.has_value());
  CHECK(h100->mechanisms.attention_kernels);
  // FlashAttention-3 on an H100, causal forward at head dim 128: 579 TFLOP/s at 4K tokens
  // (Shah et al. 2024, Figure 5), the 16K rate beyond the table (a 1M-token call), the 512 rate
  // below it.
  CHECK(attention_rate(*h100, "fa3", 128, 4096, false) == doctest::Approx(579e12));
  CHECK(attention_rate(*h100, "fa3", 128, 1 << 20, false) == doctest::Approx(616e12));
  CHECK(attention_rate(*h100, "fa3", 128, 128, false) == doctest::Approx(292e12));
  // 3K tokens: log2(3072 / 2048) = 0.585 of the way from 521 to 579.
  CHECK(attention_rate(*h100, "fa3", 128, 3072, false) ==
        doctest::Approx(521e12 + std::log2(1.5) * 58e12));
  // Head dim 96: halfway between the 64 (420) and 128 (579) rows at 4K.
  CHECK(attention_rate(*h100, "fa3", 96, 4096, false) == doctest::Approx(499.5e12));
  // The causal backward: the non-causal backward (542) times the causal over the non-causal
  // forward (579 / 638) at 4K.
  CHECK(attention_rate(*h100, "fa3", 128, 4096, true) == doctest::Approx(542e12 * 579 / 638));
  CHECK(attention_rate(*h100, "cudnn", 128, 8192, false) == doctest::Approx(529e12));
  CHECK(attention_rate(*h100, "fa2", 64, 16384, false) == doctest::Approx(299e12));
  // A layer's attention at that rate: its forward FLOPs over 579 TFLOP/s for 4K-token calls.
  TransformerModel long_seq = m;
  long_seq.seq_len = 4096;
  long_seq.micro_batch_size = 1;
  long_seq.hidden = 4096;
  long_seq.attention.heads = 32;
  long_seq.attention.kv_heads = 8;
  const ComponentWork layer = transformer_layer_work(long_seq, Sharding{});
  PassWork attention;
  attention.attention_flops = layer.forward.attention_flops;
  attention.attention_head_dim = layer.forward.attention_head_dim;
  attention.attention_key_len = layer.forward.attention_key_len;
  CHECK(attention.attention_key_len == 4096);
  CHECK(pass_time(attention, *h100, 2.0, false, Fp8Gemms::Off, "fa3").attention_s ==
        doctest::Approx(layer.forward.attention_flops / 579e12));
  // Switched off, or on a chip without the table (the H200's would be the H100's): the flat
  // fractions, and the report says why.
  auto off =
      gpu_of("gpu: {preset: h100-sxm, first_principles: {attention_kernels: false}}\n", &m, d);
  REQUIRE(off.has_value());
  CHECK(attention_rate(*off, "fa3", 128, 4096, false) == 0.0);
  CHECK(pass_time(attention, *off, 2.0, false, Fp8Gemms::Off, "fa3").attention_s ==
        doctest::Approx(layer.forward.attention_flops / (989.4e12 * 0.6)));
  auto h200 = gpu_of("gpu: {preset: h200}\n", &m, d);
  REQUIRE(h200.has_value());
  CHECK_FALSE(h200->mechanisms.attention_kernels);
  CHECK(h200->mechanisms.off.back().second.find("no published fa3 table") != std::string::npos);
  DiagnosticList refused;
  CHECK_FALSE(
      gpu_of("gpu: {preset: h200, first_principles: {attention_kernels: true}}\n", &m, refused));
}

TEST_CASE("attention_backend names a fused kernel: refused beside the standard attention") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(
      "model: {layers: 2, hidden: 64, heads: 4, seq_len: 32, attention: standard, "
      "attention_backend: fa2}\n",
      "m.yaml", d);
  CHECK_FALSE(read_transformer_model(doc.root().child("model"), d).has_value());
  REQUIRE_FALSE(d.empty());
  CHECK(d.items().front().message.find("needs attention: flash") != std::string::npos);
  // A framework's backend gives way where the scenario asks for the standard attention.
  DiagnosticList ok;
  YamlDocument core = YamlDocument::load_string(
      "model: {layers: 2, hidden: 64, heads: 4, seq_len: 32, attention: standard, "
      "framework: megatron-core}\n",
      "m.yaml", ok);
  auto m = read_transformer_model(core.root().child("model"), ok);
  REQUIRE(m.has_value());
  CHECK(m->kernels.attention_backend.empty());
}
