// The memory-bound kernels the roofline prices by HBM traffic, counted by hand for a small GPT
// layer: the MLP activation fused and one kernel per operation (`model.activation_fusion`), the
// standard attention's glue kernels (`model.glue_kernels`) and where the bias gradients are
// summed (`model.bias_grad`); and the time each adds at a known bandwidth.
#include <doctest/doctest.h>

#include <string>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/op_timing.h"

using namespace bubblesim;

namespace {

// h 64, a 4 (d 16), s 32, b 2: T = 64 tokens; GeLU f = 256; 16-bit elements (e = 2).
TransformerModel small_gpt() {
  TransformerModel m;
  m.layers = 2;
  m.hidden = 64;
  m.attention.heads = 4;
  m.seq_len = 32;
  m.micro_batch_size = 2;
  m.attention.kind = AttentionKind::Standard;
  m.dtype.name = "fp16";
  m.dtype.bytes = 2;
  return m;
}

double bytes_of(const PassWork& w, const std::string& name) {
  for (const MemoryWork& m : w.memory)
    if (m.name == name) return m.bytes;
  return 0.0;
}

GpuSpec one_tb_per_s() {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(1e15);
  g.memory_bandwidth = Bandwidth::bytes_per_second(1e12);
  g.efficiency.kind = EfficiencyModel::Kind::Roofline;
  g.efficiency.memory = 0.5;  // 0.5e12 B/s
  return g;
}

}  // namespace

TEST_CASE("MLP activation: fused, forward unfused and unfused bytes per element") {
  TransformerModel m = small_gpt();
  const double elems = 64.0 * 256.0;  // T x f = 16384
  ComponentWork fused = transformer_layer_work(m, Sharding{});
  // Fused bias-GeLU: read y, write out (2e); backward: read g and y, write (3e).
  CHECK(bytes_of(fused.forward, "mlp_activation") == 4.0 * elems);
  CHECK(bytes_of(fused.backward_input, "mlp_activation_grad") == 6.0 * elems);

  m.kernels.activation_fusion = ActivationFusion::ForwardUnfused;
  ComponentWork fwd = transformer_layer_work(m, Sharding{});
  // bias_gelu as ten kernels: 23e = 46 bytes per element; the backward stays fused.
  CHECK(bytes_of(fwd.forward, "mlp_activation") == 46.0 * elems);
  CHECK(bytes_of(fwd.backward_input, "mlp_activation_grad") == 6.0 * elems);
  // At 0.5 TB/s the forward is 42 x 16384 bytes = 1.376256 us slower, nothing else moves.
  const GpuSpec gpu = one_tb_per_s();
  CHECK(pass_time(fwd.forward, gpu, 2, false).memory_s -
            pass_time(fused.forward, gpu, 2, false).memory_s ==
        doctest::Approx(42.0 * elems / 0.5e12).epsilon(1e-12));
  CHECK(pass_time(fwd.forward, gpu, 2, false).gemm_s ==
        pass_time(fused.forward, gpu, 2, false).gemm_s);

  m.kernels.activation_fusion = ActivationFusion::Unfused;
  ComponentWork both = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(both.backward_input, "mlp_activation_grad") == 92.0 * elems);  // 46e

  // SwiGLU (f 256 per matrix): fused 3e / 5e; unfused silu + mul 5e, swiglu_back 29e.
  m.mlp.kind = MlpKind::Swiglu;
  CHECK(bytes_of(both.forward, "mlp_activation") == 46.0 * elems);  // the GeLU layer above
  ComponentWork swiglu = transformer_layer_work(m, Sharding{});
  CHECK(bytes_of(swiglu.forward, "mlp_activation") == 10.0 * elems);
  CHECK(bytes_of(swiglu.backward_input, "mlp_activation_grad") == 58.0 * elems);
  // Activation memory does not depend on how the kernels run.
  CHECK(fwd.activation_bytes == fused.activation_bytes);
}

TEST_CASE("standard attention's glue kernels, by hand") {
  TransformerModel m = small_gpt();
  ComponentWork on = transformer_layer_work(m, Sharding{});
  // T = 64, QKV width 3h = 192, context width h = 64, e = 2.
  CHECK(bytes_of(on.forward, "qkv_bias_add") == 2.0 * 64 * 192 * 2);    // 49152
  CHECK(bytes_of(on.forward, "context_permute") == 2.0 * 64 * 64 * 2);  // 16384
  CHECK(bytes_of(on.backward_input, "context_permute_grad") == 2.0 * 64 * 64 * 2);
  CHECK(bytes_of(on.backward_input, "qk_scale_grad") == 2.0 * 2.0 * 64 * 64 * 2);  // dQ, dK
  CHECK(bytes_of(on.backward_input, "qkv_grad_concat") == 2.0 * 64 * 192 * 2);

  m.kernels.glue_kernels = false;
  ComponentWork off = transformer_layer_work(m, Sharding{});
  CHECK(off.forward.memory_bytes() == on.forward.memory_bytes() - 49152.0 - 16384.0);
  CHECK(off.backward_input.memory_bytes() ==
        on.backward_input.memory_bytes() - 16384.0 - 32768.0 - 49152.0);

  // Without biases there is no QKV bias add; with flash attention there are no glue kernels.
  m.kernels.glue_kernels = true;
  m.bias = false;
  CHECK(bytes_of(transformer_layer_work(m, Sharding{}).forward, "qkv_bias_add") == 0.0);
  m.attention.kind = AttentionKind::Flash;
  CHECK(bytes_of(transformer_layer_work(m, Sharding{}).forward, "context_permute") == 0.0);
}

TEST_CASE("bias gradients: summed in B (the zero-bubble split) or deferred to W") {
  TransformerModel m = small_gpt();
  ComponentWork in_b = transformer_layer_work(m, Sharding{});
  // Each linear's output gradient read once: T x (3h + h + f + h) x e = 64 x 576 x 2 = 73728.
  const double sums = 64.0 * (192 + 64 + 256 + 64) * 2;
  CHECK(bytes_of(in_b.backward_input, "qkv_bias_grad") == 64.0 * 192 * 2);
  CHECK(in_b.backward_weight.memory_bytes() == 0.0);
  m.kernels.bias_grad = BiasGradPass::BackwardWeight;
  ComponentWork in_w = transformer_layer_work(m, Sharding{});
  CHECK(in_w.backward_weight.memory_bytes() == sums);
  CHECK(in_b.backward_input.memory_bytes() - in_w.backward_input.memory_bytes() == sums);
}
