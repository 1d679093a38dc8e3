// DeepSeek-V3's multi-token prediction module, `model.mtp_depth` (docs/models.md): what it adds to
// the LM head's stage, counted here by hand from the model's dimensions; its block is checked
// against the same stage with one more layer (another path through the stage builder), the rest
// (norms, projection, second head pass and loss) against the formulas. Parameters against
// DeepSeek's README_WEIGHTS.md and model card.
#include "sim/costmodel/mtp_work.h"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/costmodel/model_costs.h"
#include "sim/costmodel/model_reader.h"

using namespace bubblesim;

namespace {

constexpr double kH = 1024, kS = 1024, kV = 32000, kE = 2;  // hidden, tokens (b 1), vocab, bytes

TransformerModel small(std::int64_t layers, std::vector<std::int64_t> split, std::int64_t depth) {
  TransformerModel m;
  m.layers = layers;
  m.hidden = 1024;
  m.attention.heads = 16;
  m.seq_len = 1024;
  m.embedding.vocab = 32000;
  m.mlp.kind = MlpKind::Swiglu;
  m.bias = false;
  m.dropout = false;
  m.split.per_stage = std::move(split);
  m.embedding.mtp_depth = depth;
  return m;
}

/// Every FLOP at 0.5 of 312 TFLOP/s; memory-bound work free (the published formula's model).
GpuSpec constant_gpu() {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(312e12);
  g.memory_bandwidth = Bandwidth::bytes_per_second(2e12);
  g.efficiency.constant = 0.5;
  return g;
}

/// One second per all-reduce equivalent: a stage's tp_comm is then its collective count.
class CountingTimer : public CollectiveTimer {
 public:
  Time tensor_parallel(std::int32_t, double) const override { return Time::from_seconds(1.0); }
  Time parameter_gather(std::int32_t, double) const override { return Time::zero(); }
  Time gradient_reduce_scatter(std::int32_t, double) const override { return Time::zero(); }
};

StageBreakdown last_stage(const TransformerModel& m, Sharding sh = {},
                          const CollectiveTimer* timer = nullptr) {
  ModelCostInputs in;
  in.model = m;
  in.gpu = constant_gpu();
  in.stages = 2;
  in.sharding = sh;
  in.collectives = timer;
  return model_costs(in).stages.back();
}

TransformerModel preset(const std::string& yaml) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(yaml, "s.yaml", d);
  auto m = read_transformer_model(doc.root().child("model"), d);
  REQUIRE_MESSAGE(m.has_value(), (d.empty() ? "" : d.items().front().render()));
  return *m;
}

}  // namespace

TEST_CASE("mtp_depth: the head's stage gains one block, the projection, norms, head and loss") {
  const StageBreakdown plain = last_stage(small(4, {2, 2}, 0));
  const StageBreakdown mtp = last_stage(small(4, {2, 2}, 1));
  const StageBreakdown deeper = last_stage(small(5, {2, 3}, 0));  // one more layer: the block
  CHECK(mtp.layers == plain.layers);
  CHECK(mtp.mtp.depth == 1);
  CHECK(plain.mtp.depth == 0);
  const double rate = 312e12 * 0.5;
  // F, B and W each run the projection (T x 2h by 2h x h) and the logits GEMM (T x h by h x V)
  // once: 2 T 2h h + 2 T h V FLOPs per pass; the norms, lookup and loss are memory-bound (free).
  const double extra_flops = 2 * kS * 2 * kH * kH + 2 * kS * kH * kV;
  auto delta = [](const TimeParts& a, const TimeParts& b) { return a.seconds() - b.seconds(); };
  CHECK(delta(mtp.forward, plain.forward) ==
        doctest::Approx(delta(deeper.forward, plain.forward) + extra_flops / rate).epsilon(1e-9));
  CHECK(delta(mtp.backward_input, plain.backward_input) ==
        doctest::Approx(delta(deeper.backward_input, plain.backward_input) + extra_flops / rate)
            .epsilon(1e-9));
  CHECK(delta(mtp.backward_weight, plain.backward_weight) ==
        doctest::Approx(delta(deeper.backward_weight, plain.backward_weight) + extra_flops / rate)
            .epsilon(1e-9));
  CHECK(mtp.forward.mtp == doctest::Approx(delta(mtp.forward, plain.forward)));
  // M_B: the block's, both norms' inputs and the concatenated 2h input of the projection
  // (4 T h e), the second head pass's final-norm and head inputs (2 T h e) and its fp32 softmax
  // (4 T V).
  const double act = mtp.memory.activation.as_double() - plain.memory.activation.as_double();
  const double block_act =
      deeper.memory.activation.as_double() - plain.memory.activation.as_double();
  CHECK(act == doctest::Approx(block_act + 6 * kS * kH * kE + 4 * kS * kV).epsilon(1e-9));
  CHECK(mtp.mtp.activation.as_double() == doctest::Approx(act).epsilon(1e-9));
  // M_W: the projection's input (2h) and output gradient (h), the head's input and logits
  // gradient.
  const double wg = mtp.memory.weight_grad.as_double() - plain.memory.weight_grad.as_double();
  const double block_wg =
      deeper.memory.weight_grad.as_double() - plain.memory.weight_grad.as_double();
  CHECK(wg == doctest::Approx(block_wg + 4 * kS * kH * kE + kS * kV * kE).epsilon(1e-9));
  // Parameters: the block's, the projection 2h x h, enorm, hnorm and the depth's final norm; the
  // head matrix is shared. Static memory at 18 bytes per parameter (bf16, no ZeRO).
  const double params = deeper.parameters_per_gpu - plain.parameters_per_gpu + 2 * kH * kH + 3 * kH;
  CHECK(mtp.parameters_per_gpu - plain.parameters_per_gpu == doctest::Approx(params));
  CHECK(mtp.memory.static_memory.as_double() - plain.memory.static_memory.as_double() ==
        doctest::Approx(18 * params).epsilon(1e-9));
  CHECK(mtp.mtp.static_memory.as_double() == doctest::Approx(18 * params).epsilon(1e-9));
  CHECK(mtp_parameters(small(4, {2, 2}, 1)) == doctest::Approx(params));
  CHECK(mtp_parameters(small(4, {2, 2}, 0)) == 0);
  // The whole model's count stays the main model's.
  CHECK(model_parameters(small(4, {2, 2}, 1)) == model_parameters(small(4, {2, 2}, 0)));

  // Two depths cost twice one; only the head's stage changes.
  const StageBreakdown two = last_stage(small(4, {2, 2}, 2));
  CHECK(delta(two.forward, plain.forward) ==
        doctest::Approx(2 * delta(mtp.forward, plain.forward)).epsilon(1e-9));
  CHECK(mtp_parameters(small(4, {2, 2}, 2)) == doctest::Approx(2 * params));
  ModelCostInputs in;
  in.model = small(4, {2, 2}, 1);
  in.gpu = constant_gpu();
  in.stages = 2;
  const ModelCosts with = model_costs(in);
  in.model.embedding.mtp_depth = 0;
  const ModelCosts without = model_costs(in);
  CHECK(with.profile.stages.front().forward == without.profile.stages.front().forward);
  CHECK(with.profile.stages.front().static_memory == without.profile.stages.front().static_memory);
}

TEST_CASE("mtp_depth on the roofline: the norms, lookup and loss cost their bytes") {
  // No call overhead, so each GEMM (all compute-bound here) takes its FLOPs at 0.8 of peak and
  // the memory-bound kernels their bytes at 0.8 of 2 TB/s.
  GpuSpec g = constant_gpu();
  g.efficiency.kind = EfficiencyModel::Kind::Roofline;
  g.efficiency.gemm_max = 0.8;
  g.efficiency.gemm_overhead_s = 0;
  g.efficiency.memory = 0.8;
  auto stage = [&](const TransformerModel& m) {
    ModelCostInputs in;
    in.model = m;
    in.gpu = g;
    in.stages = 2;
    return model_costs(in).stages.back();
  };
  const StageBreakdown plain = stage(small(4, {2, 2}, 0));
  const StageBreakdown mtp = stage(small(4, {2, 2}, 1));
  const StageBreakdown deeper = stage(small(5, {2, 3}, 0));
  const double flops = 2 * kS * 2 * kH * kH + 2 * kS * kH * kV;  // projection, logits
  const double compute = flops / (312e12 * 0.8), bw = 2e12 * 0.8, H = kS * kH * kE;
  // F: lookup 2H, two norms 4H, concatenation 4H, the head's final norm 2H; Megatron's fp32 loss
  // over T V logits: cast (e + 4), max 4, subtract 8, exp 8, sum 4, divide 8 bytes per logit.
  const double f_bytes = 12 * H + (kE + 4 + 32) * kS * kV;
  // B: the lookup's gradient scatter 2H, both norms 6H, the final norm 3H; the loss gradient in
  // place (8) and its cast back (4 + e) per logit.
  const double b_bytes = 11 * H + (8 + 4 + kE) * kS * kV;
  auto delta = [](const TimeParts& a, const TimeParts& b) { return a.seconds() - b.seconds(); };
  CHECK(
      delta(mtp.forward, plain.forward) ==
      doctest::Approx(delta(deeper.forward, plain.forward) + compute + f_bytes / bw).epsilon(1e-9));
  CHECK(delta(mtp.backward_input, plain.backward_input) ==
        doctest::Approx(delta(deeper.backward_input, plain.backward_input) + compute + b_bytes / bw)
            .epsilon(1e-9));
  CHECK(delta(mtp.backward_weight, plain.backward_weight) ==
        doctest::Approx(delta(deeper.backward_weight, plain.backward_weight) + compute)
            .epsilon(1e-9));
}

TEST_CASE("mtp_depth: memory-bound work and tensor-parallel collectives of the projection part") {
  // t = 1: F looks up T x h (read and write), normalises two T x h tensors (read, write) and
  // concatenates them (read both, write 2h): 2 + 4 + 4 = 10 T h e bytes; B scatters the lookup's
  // gradient (2) and runs both norms' backward (read x and dy, write dx: 6): 8 T h e.
  const ComponentWork w = mtp_projection_work(small(4, {2, 2}, 1), Sharding{});
  CHECK(w.forward.memory_bytes() == doctest::Approx(10 * kS * kH * kE));
  CHECK(w.backward_input.memory_bytes() == doctest::Approx(8 * kS * kH * kE));
  for (const GemmWork& g : w.forward.gemms) CHECK(g.linear);  // FP8 under fp8_linear

  // TP 2, counted in all-reduce equivalents of T h e over the stage: with sequence parallelism F
  // reduce-scatters the lookup (1/2), all-gathers the 2h input of the projection (1) and its
  // output (1/2), and the head all-gathers its input (1/2); B mirrors each (the output's
  // scatter back to the sequence shard is an all-gather in B).
  const CountingTimer timer;
  Sharding sp{2, true};
  const double block_f = last_stage(small(5, {2, 3}, 0), sp, &timer).forward.tp_comm -
                         last_stage(small(4, {2, 2}, 0), sp, &timer).forward.tp_comm;
  const StageBreakdown plain_sp = last_stage(small(4, {2, 2}, 0), sp, &timer);
  const StageBreakdown mtp_sp = last_stage(small(4, {2, 2}, 1), sp, &timer);
  CHECK(mtp_sp.forward.tp_comm - plain_sp.forward.tp_comm == doctest::Approx(block_f + 2.5));
  CHECK(mtp_sp.backward_input.tp_comm - plain_sp.backward_input.tp_comm ==
        doctest::Approx(block_f + 2.5));
  // Without SP: F all-reduces the lookup (1) and all-gathers the output (1/2); B all-reduces the
  // projection's 2h input gradient (2) and the head's input gradient (1).
  Sharding tp{2, false};
  const StageBreakdown plain_tp = last_stage(small(4, {2, 2}, 0), tp, &timer);
  const StageBreakdown mtp_tp = last_stage(small(4, {2, 2}, 1), tp, &timer);
  CHECK(mtp_tp.forward.tp_comm - plain_tp.forward.tp_comm == doctest::Approx(2 + 1.5));
  CHECK(mtp_tp.backward_input.tp_comm - plain_tp.backward_input.tp_comm ==
        doctest::Approx(2 + 3.0));
}

TEST_CASE("mtp_depth with MoE: the block is a MoE layer with its experts and all-to-all") {
  const std::string moe = ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512}";
  auto model = [&](int layers, const char* split, int depth) {
    return preset("model: {layers: " + std::to_string(layers) +
                  ", hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000, mlp: swiglu, bias: "
                  "false, dropout: false, layers_per_stage: " +
                  split + ", mtp_depth: " + std::to_string(depth) + moe + "}\n");
  };
  const StageBreakdown plain = last_stage(model(4, "[2, 2]", 0));
  const StageBreakdown mtp = last_stage(model(4, "[2, 2]", 1));
  const StageBreakdown deeper = last_stage(model(5, "[2, 3]", 0));
  CHECK(mtp_block_is_moe(model(4, "[2, 2]", 1)));
  CHECK(mtp.expert_parameters_per_gpu - plain.expert_parameters_per_gpu ==
        doctest::Approx(deeper.expert_parameters_per_gpu - plain.expert_parameters_per_gpu));
  CHECK(mtp.memory.expert_activation == deeper.memory.expert_activation);
  CHECK(mtp.experts.load.forward == deeper.experts.load.forward);
  // With every layer dense (moe.dense_layers covers the model), the block is dense too.
  TransformerModel dense = model(4, "[2, 2]", 1);
  dense.moe->dense_layers = 8;
  CHECK_FALSE(mtp_block_is_moe(dense));
}

TEST_CASE("deepseek-v3 with mtp_depth 1: 671B main model, the MTP module counted apart") {
  const TransformerModel m = preset("model: {preset: deepseek-v3}\n");  // config.json: 1
  REQUIRE(m.embedding.mtp_depth == 1);
  const TransformerModel main_only = preset("model: {preset: deepseek-v3, mtp_depth: 0}\n");
  CHECK(model_parameters(m) == model_parameters(main_only));
  CHECK(model_parameters(m) == doctest::Approx(671e9).epsilon(0.01));
  // By hand from config.json: layer 61 is a MoE layer (MLA as in moe_work_test.cpp, router
  // 256 x 7168, 1 shared + 256 routed SwiGLU experts of 2048), plus enorm, hnorm, eh_proj
  // (7168 x 14336) and shared_head.norm.
  const double h = 7168, v = 129280;
  const double attention =
      h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h + 2 * h;
  const double block = attention + 256 * h + 257 * 3 * h * 2048;
  const double mtp = mtp_parameters(m);
  CHECK(mtp == doctest::Approx(block + 2 * h * h + 3 * h).epsilon(1e-12));
  MESSAGE("MTP module: " << mtp / 1e9 << "B unique (block " << block / 1e9 << "B, eh_proj "
                         << 2 * h * h / 1e9 << "B); with the stored embedding and head copies "
                         << (mtp + 2 * v * h) / 1e9 << "B");
  // README_WEIGHTS.md (deepseek-ai/DeepSeek-V3): "11.5B unique parameters, excluding the shared
  // 0.9B Embedding and 0.9B output Head". The block with its norms alone is 11.507B, 11.5B at
  // three digits; eh_proj's 0.103B more make 11.61B, 0.96% above the stated 11.5B.
  CHECK(std::round((mtp - 2 * h * h) / 1e8) == 115.0);
  CHECK(mtp == doctest::Approx(11.5e9).epsilon(0.01));
  // The model card's "685B = 671B main model + 14B MTP": the checkpoint's layer 61 stores the
  // module with copies of the embedding and head (13.46B); 685B and 671B are rounded, so their
  // difference only fixes the MTP count to [13, 15) B.
  CHECK(mtp + 2 * v * h >= 13.0e9);
  CHECK(mtp + 2 * v * h < 15.0e9);
  // The report's JSON: parameters_mtp beside parameters, only when the module is there.
  const nlohmann::json j = transformer_model_json(m);
  CHECK(j.at("parameters_mtp").get<double>() == mtp);
  CHECK(j.at("mtp_depth") == 1);
  CHECK_FALSE(transformer_model_json(main_only).contains("parameters_mtp"));
}
