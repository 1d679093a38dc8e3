#include "sim/scenario/transformer_costs.h"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace bubblesim;

namespace {

TransformerModel small_model() {
  TransformerModel m;
  m.layers = 4;
  m.hidden = 1024;
  m.attention.heads = 16;
  m.seq_len = 2048;
  m.micro_batch_size = 1;
  m.embedding.vocab = 1000;
  m.dtype.name = "bf16";
  m.dtype.bytes = 2;
  m.attention.kind = AttentionKind::Standard;  // the published formulas keep the s^2 scores
  return m;
}

}  // namespace

TEST_CASE("per-layer formulas") {
  TransformerLayerCosts c = transformer_layer_costs(small_model());
  // b s h (24h + 4s) = 2048 * 1024 * (24576 + 8192)
  CHECK(c.forward_flops == 68719476736.0);
  CHECK(c.backward_input_flops == 85899345920.0);   // 2048 * 1024 * (24576 + 16384)
  CHECK(c.backward_weight_flops == 51539607552.0);  // 24 * 2048 * 1024^2
  CHECK(c.activation_bytes == 406847488.0);         // 2048 * (34 * 1024 + 5 * 16 * 2048)
  CHECK(c.weight_grad_bytes == 67108864.0);         // 32 * 2048 * 1024
  CHECK(c.hidden_state_bytes == 4194304.0);         // 2048 * 1024 * 2
  CHECK(c.parameters == 12596224.0);                // 12 * 1024^2 + 13 * 1024
  CHECK(c.lm_head_flops == 4194304000.0);           // 2 * 2048 * 1024 * 1000
}

TEST_CASE("layers are split evenly, the first stages take the remainder") {
  CHECK(split_layers(8, 4) == std::vector<std::int64_t>{2, 2, 2, 2});
  CHECK(split_layers(5, 2) == std::vector<std::int64_t>{3, 2});
  CHECK(split_layers(10, 4) == std::vector<std::int64_t>{3, 3, 2, 2});
  CHECK_THROWS_WITH_AS(
      split_layers(3, 4),
      "3 layers cannot be split over 4 pipeline stages (each stage needs at least one layer)",
      std::invalid_argument);
}

TEST_CASE("bytes per parameter") {
  CHECK(static_bytes_per_parameter(2) == 18);
  CHECK(static_bytes_per_parameter(4) == 16);
}

TEST_CASE("stage costs against hand-computed numbers") {
  GpuSpec gpu;
  gpu.flops = FlopRate::flops_per_second(100e12);
  gpu.efficiency.constant = 0.5;  // 5e13 FLOP/s effective
  CostProfile p = transformer_costs(small_model(), gpu, 2);
  REQUIRE(p.stages.size() == 2);
  const StageCost& s0 = p.stages[0];
  const StageCost& s1 = p.stages[1];
  // 2 layers: 2^37 FLOPs / 5e13 = 2.74877906944 ms
  CHECK(s0.forward.ps() == 2748779069);
  CHECK(s0.backward_input.ps() == 3435973837);   // 171798691840 / 5e13
  CHECK(s0.backward_weight.ps() == 2061584302);  // 103079215104 / 5e13
  CHECK(s0.recompute == s0.forward);
  CHECK(s0.fused == Time::zero());
  // The last stage adds the LM head: 2 b s h V = 4194304000 FLOPs to F, B and W.
  CHECK(s1.forward.ps() == 2832665149);          // 141633257472 / 5e13
  CHECK(s1.backward_input.ps() == 3519859917);   // 175993: 171798691840 + 4194304000 = 175992995840
  CHECK(s1.backward_weight.ps() == 2145470382);  // 107273519104 / 5e13
  CHECK(s0.activation.count() ==
        813694976 + 2097152);  // + embedding dropout mask s b h     // 2 * 406847488
  CHECK(s0.weight_grad.count() == 134217728);
  CHECK(s0.p2p.count() == 4194304);
  CHECK(s0.stage_input.count() == 4194304);
  // (2 * 12596224 + 1000 * 1024) * 18: both ends hold the (tied) embedding; the last stage
  // also the final LayerNorm (2h = 2048 parameters).
  CHECK(s0.static_memory.count() == 471896064);
  CHECK(s1.static_memory.count() == 471896064 + 2048 * 18);
}

TEST_CASE("too few layers or no compute rate") {
  GpuSpec gpu;
  gpu.flops = FlopRate::flops_per_second(100e12);
  CHECK_THROWS_AS(transformer_costs(small_model(), gpu, 8), std::invalid_argument);
  GpuSpec none;
  CHECK_THROWS_AS(transformer_costs(small_model(), none, 2), std::invalid_argument);
}
