// Framework presets (`model.framework`, scenarios/presets/frameworks.yaml): the kernel keys they
// give and how a scenario's own keys and a model preset's rank against them, the kernel launches
// the layer work counts, and the host's launch time as a lower bound on a component's pass.
#include <doctest/doctest.h>

#include <string>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_costs.h"
#include "sim/costmodel/model_reader.h"
#include "sim/costmodel/presets.h"

using namespace bubblesim;

namespace {

std::optional<TransformerModel> model_of(const std::string& yaml, DiagnosticList& d) {
  YamlDocument doc = YamlDocument::load_string(yaml, "framework.yaml", d);
  return read_transformer_model(doc.root().child("model"), d);
}

// h 64, a 4, s 32, b 2 with biases and dropout (GPT).
TransformerModel small_gpt(AttentionKind attention) {
  TransformerModel m;
  m.layers = 4;
  m.hidden = 64;
  m.attention.heads = 4;
  m.attention.kind = attention;
  m.seq_len = 32;
  m.micro_batch_size = 2;
  return m;
}

}  // namespace

TEST_CASE(
    "model.framework: the preset's kernel keys, under the scenario's, over a model preset's") {
  DiagnosticList d;
  // llama3-8b's preset says flash; Megatron-LM of 2021 ran standard attention.
  auto m = model_of("model: {preset: llama3-8b, framework: megatron-lm-2021}\n", d);
  REQUIRE(m.has_value());
  CHECK(m->attention.kind == AttentionKind::Standard);
  CHECK(m->kernels.glue_kernels);
  CHECK(m->kernels.framework == "megatron-lm-2021");
  CHECK(m->kernels.host_launch_s == doctest::Approx(13e-6));
  // The scenario's own key wins over the framework's.
  auto own =
      model_of("model: {preset: llama3-8b, framework: megatron-lm-2021, attention: flash}\n", d);
  REQUIRE(own.has_value());
  CHECK(own->attention.kind == AttentionKind::Flash);
  // Megatron-Core: fused attention, the bias gradient with W, no glue kernels; host_launch given.
  auto core = model_of(
      "model: {layers: 2, hidden: 64, heads: 4, seq_len: 32, attention: standard,\n"
      "        framework: {preset: megatron-core, host_launch: 0us}}\n",
      d);
  REQUIRE(core.has_value());
  CHECK(core->attention.kind == AttentionKind::Standard);  // the scenario's
  CHECK(core->kernels.bias_grad == BiasGradPass::BackwardWeight);
  CHECK_FALSE(core->kernels.glue_kernels);
  CHECK(core->kernels.host_launch_s == 0.0);
  CHECK(d.empty());
  // The JSON report's model gives the framework and its launches per layer (F, B, W).
  const nlohmann::json j = transformer_model_json(*core);
  CHECK(j["framework"]["preset"] == "megatron-core");
  CHECK(j["framework"]["host_launch_s"] == 0.0);
  // W: four weight-gradient GEMMs and, with the bias gradients moved to W, their four sums.
  CHECK(j["framework"]["launches_per_layer"]["backward_weight"] == 8.0);
  // Without a framework nothing changes: the defaults, no launch bound.
  auto none = model_of("model: {layers: 2, hidden: 64, heads: 4, seq_len: 32}\n", d);
  REQUIRE(none.has_value());
  CHECK_FALSE(transformer_model_json(*none).contains("framework"));
  CHECK(none->kernels.framework.empty());
  CHECK(none->kernels.host_launch_s == 0.0);
  // A map without its preset is an error naming the key.
  DiagnosticList bad;
  CHECK_FALSE(model_of("model: {layers: 2, hidden: 64, heads: 4, seq_len: 32,\n"
                       "        framework: {host_launch: 1us}}\n",
                       bad)
                  .has_value());
  REQUIRE_FALSE(bad.empty());
  CHECK(bad.items().front().render().find("model.framework: missing required key 'preset'") !=
        std::string::npos);
}

TEST_CASE("the framework presets' every value parses and names its source") {
  const Presets& p = Presets::builtin();
  REQUIRE(p.framework_names().size() >= 2);
  for (const std::string& name : p.framework_names()) {
    CAPTURE(name);
    DiagnosticList d;
    auto m = model_of(
        "model: {layers: 2, hidden: 64, heads: 4, seq_len: 32, framework: " + name + "}\n", d);
    CHECK(m.has_value());
    CHECK(d.empty());
    const YamlNode node = *p.framework(name);
    for (const auto& e : node.raw()) {
      const std::string key = e.first.as<std::string>();
      if (key != "sources") CHECK_MESSAGE(node.child("sources").raw()[key], key);
    }
  }
}

TEST_CASE(
    "kernel launches of a GPT layer: one per GEMM, attention kernel and memory-bound kernel") {
  const ComponentWork standard = transformer_layer_work(small_gpt(AttentionKind::Standard), {});
  // F: qkv, attention_out, qk, attention_v, mlp_up, mlp_down; the QKV bias add, context permute,
  // softmax, attention dropout, two norms, two bias-dropout-adds, the fused activation.
  CHECK(standard.forward.launches() == 6 + 9);
  // B: eight GEMMs; four bias-gradient sums, dropout and softmax gradients, the permute
  // gradient, dQ and dK scaled, the dQKV concatenation, two norm and two residual gradients,
  // the activation gradient.
  CHECK(standard.backward_input.launches() == 8 + 15);
  CHECK(standard.backward_weight.launches() == 4);
  const ComponentWork flash = transformer_layer_work(small_gpt(AttentionKind::Flash), {});
  CHECK(flash.forward.launches() == 4 + 1 + 5);             // one FlashAttention kernel
  CHECK(flash.backward_input.launches() == 4 + 3 + 4 + 5);  // its backward's three
  // The unfused bias-GeLU forward is ten kernels instead of one.
  TransformerModel unfused = small_gpt(AttentionKind::Flash);
  unfused.kernels.activation_fusion = ActivationFusion::ForwardUnfused;
  CHECK(transformer_layer_work(unfused, {}).forward.launches() == flash.forward.launches() + 9);
}

TEST_CASE("host_launch: a pass takes at least its launches x the host's time per launch") {
  TransformerModel m = small_gpt(AttentionKind::Flash);
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(312e12);
  g.memory_bandwidth = Bandwidth::bytes_per_second(2e12);
  g.efficiency.kind = EfficiencyModel::Kind::Roofline;
  ModelCostInputs in;
  in.gpu = g;
  in.stages = 1;
  in.model = m;
  const StageBreakdown fast = model_costs(in).stages.front();
  // A tiny layer's kernels take microseconds: 1 ms a launch makes the host the bound.
  in.model.kernels.host_launch_s = 1e-3;
  const StageBreakdown bound = model_costs(in).stages.front();
  const ComponentWork layer = transformer_layer_work(m, {});
  CHECK(bound.forward.layers == doctest::Approx(4 * layer.forward.launches() * 1e-3));
  CHECK(bound.backward_input.layers == doctest::Approx(4 * layer.backward_input.launches() * 1e-3));
  CHECK(bound.backward_weight.layers ==
        doctest::Approx(4 * layer.backward_weight.launches() * 1e-3));
  CHECK(fast.forward.layers < bound.forward.layers / 10);
  // A host faster than the kernels changes nothing.
  in.model.kernels.host_launch_s = 1e-12;
  CHECK(model_costs(in).stages.front().forward.layers == doctest::Approx(fast.forward.layers));
}
