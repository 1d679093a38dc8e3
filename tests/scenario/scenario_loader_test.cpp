#include "tools/scenario/scenario_loader.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

Generator fake_generator(const std::string& name, std::vector<ParamSpec> params) {
  Generator g;
  g.info.name = name;
  g.info.description = "test";
  g.info.params = std::move(params);
  g.generate = [](const GeneratorInput&) { return Table{}; };
  return g;
}

Registry test_registry() {
  Registry r;
  r.add(fake_generator("gpipe", {}));
  r.add(fake_generator("1f1b", {}));
  ParamSpec delay{"slack", ParamType::Duration, Time::zero(), "extra time", {}, {}, false};
  ParamSpec ratio{"ratio", ParamType::Real, 0.5, "a ratio", {}, {}, false};
  r.add(fake_generator(
      "interleaved",
      {integer_param("chunks", 2, "chunks per device", 1),
       optional_integer_param("group", "group size", 1), boolean_param("eager", false, "eager"),
       choice_param("order", "depth-first", {"depth-first", "breadth-first"}, "order"), delay,
       ratio}));
  return r;
}

const std::string kBase = "name: t\npipeline: {stages: 2, microbatches: 4}\n";
const std::string kCosts = "costs: {forward: 1ms, backward_input: 2ms}\n";

/// The rendered diagnostics of loading `yaml`, or {} when it loads.
std::vector<std::string> errors(const std::string& yaml) {
  try {
    load_scenario_string(yaml, "s.yaml", test_registry());
  } catch (const InputError& e) {
    std::vector<std::string> out;
    for (const Diagnostic& d : e.diagnostics()) out.push_back(d.render());
    return out;
  }
  return {};
}

Scenario load(const std::string& yaml) {
  return load_scenario_string(yaml, "s.yaml", test_registry());
}

}  // namespace

TEST_CASE("the quickstart form loads with defaults filled") {
  Scenario sc = load(
      "name: example\n"
      "pipeline: {stages: 8, microbatches: 24}\n"
      "costs:\n"
      "  forward: 18.522ms\n"
      "  backward_input: 18.086ms\n"
      "  backward_weight: 9.337ms\n"
      "  activation_memory: 1GiB\n"
      "  weight_grad_memory: 0.5GiB\n"
      "  p2p_bytes: 32MiB\n"
      "communication: {model: fixed-delay, delay: 0.601ms}\n"
      "schedules: [gpipe, 1f1b]\n");
  CHECK(sc.name == "example");
  CHECK(sc.file == "s.yaml");
  CHECK(sc.stages == 8);
  CHECK(sc.microbatches == 24);
  REQUIRE(sc.costs.stages.size() == 8);
  const StageCost& c = sc.costs.stages[7];
  CHECK(c.forward.ps() == 18'522'000'000);
  CHECK(c.backward_input.ps() == 18'086'000'000);
  CHECK(c.backward_weight.ps() == 9'337'000'000);
  CHECK(c.recompute == c.forward);
  CHECK(c.fused == Time::zero());
  CHECK(c.activation.count() == 1LL << 30);
  CHECK(c.weight_grad.count() == 1LL << 29);
  CHECK(c.p2p.count() == 32LL << 20);
  CHECK(c.static_memory == Bytes::zero());
  CHECK(sc.communication.kind == CommunicationKind::FixedDelay);
  CHECK(sc.communication.delay.ps() == 601'000'000);
  CHECK(sc.memory.budget.empty());
  REQUIRE(sc.schedules.size() == 2);
  CHECK(sc.schedules[0].name == "gpipe");
  CHECK(sc.schedules[1].name == "1f1b");
  CHECK_FALSE(sc.schedules_defaulted);
  CHECK(sc.resolved["pipeline"]["stages"] == 8);
  CHECK(sc.resolved["costs"]["forward_s"].size() == 8);
  CHECK(sc.resolved["costs"]["forward_s"][0].get<double>() == doctest::Approx(0.018522));
  CHECK(sc.resolved["communication"]["model"] == "fixed-delay");
  CHECK(sc.resolved["communication"]["delay_s"].get<double>() == doctest::Approx(0.000601));
  CHECK(sc.resolved["schedules"][1]["name"] == "1f1b");
  CHECK(sc.resolved["memory"]["budget_bytes"].is_null());
}

TEST_CASE("defaults: no communication, no schedules") {
  Scenario sc = load(kBase + kCosts);
  CHECK(sc.communication.kind == CommunicationKind::FixedDelay);
  CHECK(sc.communication.delay == Time::zero());
  CHECK(sc.schedules_defaulted);
  REQUIRE(sc.schedules.size() == 3);
  CHECK(sc.schedules[2].name == "interleaved");
  // Defaults are filled, except the optional ones ("derive it").
  CHECK(sc.schedules[2].params.integer("chunks") == 2);
  CHECK_FALSE(sc.schedules[2].params.has("group"));
  CHECK(sc.schedules[2].params.text("order") == "depth-first");
  CHECK(sc.costs.stages[0].backward_weight == Time::zero());
}

TEST_CASE("per-stage lists and memory budgets") {
  Scenario sc =
      load(kBase +
           "costs: {forward: [1ms, 2ms], backward_input: 2ms, activation_memory: [1GiB, 2GiB]}\n"
           "memory: {budget: [60GiB, 70GiB]}\n");
  CHECK(sc.costs.stages[0].forward.ps() == 1'000'000'000);
  CHECK(sc.costs.stages[1].forward.ps() == 2'000'000'000);
  CHECK(sc.costs.stages[1].recompute.ps() == 2'000'000'000);
  CHECK(sc.costs.stages[1].activation.count() == 2LL << 30);
  CHECK(sc.memory.budget.size() == 2);
  CHECK(sc.resolved["memory"]["budget_bytes"][1] == 70LL << 30);

  Scenario one = load(kBase + kCosts + "memory: {budget: 60GiB}\n");
  CHECK(one.memory.budget.size() == 1);
  CHECK(one.resolved["memory"]["budget_bytes"].size() == 2);
}

TEST_CASE("schedule parameters are typed, checked and defaulted") {
  Scenario sc = load(
      kBase + kCosts +
      "schedules:\n"
      "  - gpipe\n"
      "  - {name: interleaved, params: {chunks: 4, group: 2, eager: true, order: breadth-first, "
      "slack: 1ms, ratio: 0.25}}\n");
  REQUIRE(sc.schedules.size() == 2);
  const ParamValues& p = sc.schedules[1].params;
  CHECK(p.integer("chunks") == 4);
  CHECK(p.integer("group") == 2);
  CHECK(p.boolean("eager"));
  CHECK(p.text("order") == "breadth-first");
  CHECK(p.duration("slack").ps() == 1'000'000'000);
  CHECK(p.real("ratio") == doctest::Approx(0.25));
  CHECK(sc.schedules[1].where.line == 6);
  CHECK(sc.resolved["schedules"][1]["params"]["slack"].get<double>() == doctest::Approx(0.001));
}

TEST_CASE("exact messages: unknown key, duplicate key, missing unit, wrong type") {
  CHECK(errors("name: t\npipeline: {stagse: 2, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:2:12: error: pipeline.stagse: unknown key 'stagse'; did "
                                 "you mean 'stages'? (allowed: stages, "
                                 "microbatches)"});
  CHECK(errors(kBase + kCosts + "name: u\n") ==
        std::vector<std::string>{
            "s.yaml:4:1: error: name: duplicate key 'name' (first given at line 1)"});
  CHECK(errors(kBase + "costs:\n  forward: 18.5\n  backward_input: 2ms\n") ==
        std::vector<std::string>{
            "s.yaml:4:12: error: costs.forward: '18.5' has no unit: a duration needs one of ps, "
            "ns, us, ms, s, min, h (e.g. 1.5ms)"});
  CHECK(errors("name: t\npipeline: {stages: eight, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:20: error: pipeline.stages: expected an integer, got 'eight'"});
  CHECK(errors("name: t\npipeline: [2, 4]\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:2:11: error: pipeline: expected a mapping, got a list"});
  CHECK(errors("name: t\npipeline: {stages: 8000000, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:20: error: pipeline.stages: 8000000 is out of range (allowed: 1 to 65536)"});
  CHECK(errors(kBase + kCosts + "communication: {model: foo}\n") ==
        std::vector<std::string>{"s.yaml:4:24: error: communication.model: 'foo' is not allowed "
                                 "(allowed: fixed-delay, topology)"});
}

TEST_CASE("several errors are reported at once") {
  auto e = errors(
      "name: t\n"
      "pipeline: {stages: 2, microbatches: many}\n"
      "costs: {forward: 1, backward_input: 2ms, colour: red}\n"
      "schedules: [gpip]\n"
      "extra: 1\n");
  CHECK(
      e ==
      std::vector<std::string>{
          "s.yaml:2:37: error: pipeline.microbatches: expected an integer, got 'many'",
          "s.yaml:3:18: error: costs.forward: '1' has no unit: a duration needs one of ps, ns, us, "
          "ms, s, min, "
          "h (e.g. 1.5ms)",
          "s.yaml:3:42: error: costs.colour: unknown key 'colour' (allowed: forward, "
          "backward_input, "
          "backward_weight, recompute, fused_forward_backward, activation_memory, "
          "weight_grad_memory, "
          "stage_input_memory, p2p_bytes, static_memory, profile, gradient_bytes, optimizer_step)",
          "s.yaml:4:13: error: schedules[0]: unknown schedule 'gpip'; did you mean 'gpipe'? "
          "(known: gpipe, "
          "1f1b, interleaved)",
          "s.yaml:5:1: error: extra: unknown key 'extra' (allowed: name, description, pipeline, "
          "costs, model, "
          "cluster, communication, topology, placement, memory, faults, schedules, parallelism, "
          "data_parallel)",
      });
}

TEST_CASE("costs: lists of the wrong length, missing keys, M_W > M_B") {
  CHECK(errors(kBase + "costs: {forward: [1ms, 2ms, 3ms], backward_input: 2ms}\n") ==
        std::vector<std::string>{
            "s.yaml:3:18: error: costs.forward: expected a single value or a list of 2 values "
            "(one per pipeline stage), got 3 values"});
  CHECK(
      errors(kBase + "costs: {forward: 1ms}\n") ==
      std::vector<std::string>{"s.yaml:3:8: error: costs: missing required key 'backward_input'"});
  CHECK(errors(kBase) ==
        std::vector<std::string>{"s.yaml:1:1: error: missing required key 'costs' (or give 'model' "
                                 "and 'cluster' to derive the costs)"});
  CHECK(errors(kBase + "costs: {forward: 1ms, backward_input: 1ms, activation_memory: 1GiB, "
                       "weight_grad_memory: 2GiB}\n") ==
        std::vector<std::string>{
            "s.yaml:3:89: error: costs.weight_grad_memory: weight_grad_memory (2GiB) must not "
            "exceed activation_memory (1GiB)"});
  CHECK(errors(kBase +
               "costs: {forward: 1ms, backward_input: 1ms, weight_grad_memory: [0B, 1MiB]}\n") ==
        std::vector<std::string>{
            "s.yaml:3:69: error: costs.weight_grad_memory[1]: weight_grad_memory (1MiB) must not "
            "exceed activation_memory (0B) on stage 1"});
  CHECK(errors(kBase + kCosts + "memory: {budget: [1GiB]}\n") ==
        std::vector<std::string>{
            "s.yaml:4:18: error: memory.budget: expected a single value or a list of 2 values "
            "(one per pipeline stage), got 1 values"});
}

TEST_CASE("schedule errors") {
  CHECK(errors(kBase + kCosts + "schedules: [{name: interleaved, params: {chunk: 3}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:42: error: schedules[0].params.chunk: unknown parameter 'chunk'; did you "
            "mean 'chunks'? (allowed: chunks, group, eager, order, slack, ratio)"});
  CHECK(
      errors(kBase + kCosts + "schedules: [{name: interleaved, params: {chunks: 0}}]\n") ==
      std::vector<std::string>{
          "s.yaml:4:50: error: schedules[0].params.chunks: 0 is not allowed: must be at least 1"});
  CHECK(errors(kBase + kCosts + "schedules: [{name: interleaved, params: {eager: yes}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:49: error: schedules[0].params.eager: expected true or false, got 'yes'"});
  CHECK(errors(kBase + kCosts + "schedules: [{name: gpipe, params: {x: 1}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:36: error: schedules[0].params.x: unknown parameter 'x' (no parameters are "
            "allowed here)"});
  CHECK(errors(kBase + kCosts + "schedules: [{nam: gpipe}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:14: error: schedules[0].nam: unknown key 'nam'; did you mean 'name'? "
            "(allowed: name, params)"});
  CHECK(errors(kBase + kCosts + "schedules: []\n") ==
        std::vector<std::string>{"s.yaml:4:12: error: schedules: expected at least one schedule "
                                 "(known: gpipe, 1f1b, interleaved)"});
}

TEST_CASE("transformer-derived costs, overridden key by key") {
  const std::string model =
      "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, micro_batch_size: 1, vocab: "
      "1000, dtype: bf16}\n"
      "cluster: {gpu: {flops: 100TFLOPS, efficiency: 0.5, memory: 80GiB}}\n";
  Scenario sc = load(kBase + model);
  REQUIRE(sc.costs.stages.size() == 2);
  CHECK(sc.costs.stages[0].forward.ps() == 2748779069);
  CHECK(sc.costs.stages[1].forward.ps() == 2832665149);
  CHECK(sc.costs.stages[0].activation.count() == 813694976);
  CHECK(sc.model.has_value());
  CHECK(sc.gpu->memory->count() == 80LL << 30);
  CHECK(sc.resolved["costs"]["source"] == "transformer");

  Scenario over = load(kBase + model + "costs: {backward_weight: [0s, 1ms], p2p_bytes: 1MiB}\n");
  CHECK(over.costs.stages[0].forward.ps() == 2748779069);
  CHECK(over.costs.stages[0].backward_weight == Time::zero());
  CHECK(over.costs.stages[1].backward_weight.ps() == 1'000'000'000);
  CHECK(over.costs.stages[1].p2p.count() == 1 << 20);

  CHECK(errors(kBase + "model: {layers: 1, hidden: 1024, heads: 16, seq_len: 2048}\n"
                       "cluster: {gpu: {flops: 100TFLOPS}}\n") ==
        std::vector<std::string>{
            "s.yaml:3:17: error: model.layers: 1 layers cannot be split over 2 pipeline stages "
            "(each stage needs at least one layer)"});
  CHECK(errors(kBase + "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048}\n") ==
        std::vector<std::string>{
            "s.yaml:3:8: error: model: a 'model' needs 'cluster: {gpu: {flops: ..., efficiency: "
            "...}}' to derive costs"});
  CHECK(
      errors(kBase + "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, dtype: int4}\n"
                     "cluster: {gpu: {flops: 100TB/s, efficiency: 0}}\n") ==
      std::vector<std::string>{
          "s.yaml:3:67: error: model.dtype: 'int4' is not allowed (allowed: bf16, fp16, fp32, fp8)",
          "s.yaml:4:24: error: cluster.gpu.flops: '100TB/s' has an unknown unit 'TB/s' for a "
          "compute rate: use one "
          "of FLOPS, GFLOPS, TFLOPS, PFLOPS",
          "s.yaml:4:45: error: cluster.gpu.efficiency: 0 is out of range (allowed: above 0 up to "
          "1)"});
}

TEST_CASE("communication errors without a topology") {
  CHECK(errors(kBase + kCosts + "placement: [gpu0, gpu1]\n") ==
        std::vector<std::string>{"s.yaml:4:12: error: placement: 'placement' needs a topology "
                                 "(communication.model: topology)"});
  CHECK(errors(kBase + kCosts + "communication: {model: topology}\n") ==
        std::vector<std::string>{
            "s.yaml:4:16: error: communication: 'model: topology' needs a topology "
            "(communication.topology or a top-level 'topology')"});
  CHECK(errors(kBase + kCosts + "communication: {delay: 1}\n") ==
        std::vector<std::string>{
            "s.yaml:4:24: error: communication.delay: '1' has no unit: a duration needs one of "
            "ps, ns, us, ms, s, min, h (e.g. 1.5ms)"});
}

TEST_CASE("topology and placement") {
  const std::string topo =
      "topology:\n"
      "  vertices: [{name: gpu0, kind: gpu}, {name: gpu1, kind: gpu}, {name: gpu2, kind: gpu}, "
      "{name: host0, kind: host}]\n"
      "  links: [{between: [gpu0, gpu1], bandwidth: 10GB/s, latency: 50us}, "
      "{between: [gpu1, gpu2], bandwidth: 10GB/s, latency: 50us}, "
      "{between: [gpu0, host0], bandwidth: 32GB/s, latency: 2us}]\n";
  Scenario sc = load(kBase + kCosts + topo);
  CHECK(sc.communication.kind == CommunicationKind::Topology);
  REQUIRE(sc.communication.topology);
  REQUIRE(sc.communication.placement.size() == 2);
  CHECK(sc.communication.topology->vertex_name(sc.communication.placement[1]) == "gpu1");
  CHECK(sc.resolved["communication"]["placement"] == nlohmann::json::array({"gpu0", "gpu1"}));

  Scenario placed = load(kBase + kCosts + topo + "placement: [gpu2, gpu0]\n");
  CHECK(placed.communication.topology->vertex_name(placed.communication.placement[0]) == "gpu2");

  CHECK(errors(kBase + kCosts + topo + "placement: [gpu9x, host0]\n") ==
        std::vector<std::string>{"s.yaml:7:13: error: placement[0]: unknown vertex 'gpu9x'; did "
                                 "you mean 'gpu0'? (GPUs: gpu0, gpu1, gpu2)",
                                 "s.yaml:7:20: error: placement[1]: 'host0' is a host, not a GPU"});
  CHECK(errors(kBase + kCosts + topo + "placement: [gpu1, gpu1]\n") ==
        std::vector<std::string>{
            "s.yaml:7:19: error: placement[1]: GPU 'gpu1' is used twice (already by stage 0)"});
  CHECK(errors(kBase + kCosts + topo + "placement: [gpu1]\n") ==
        std::vector<std::string>{"s.yaml:7:12: error: placement: placement lists 1 GPUs for 2 "
                                 "pipeline stages (one GPU per stage)"});
  CHECK(errors("name: t\npipeline: {stages: 4, microbatches: 4}\n" + kCosts + topo) ==
        std::vector<std::string>{
            "s.yaml:5:3: error: topology: the topology has 3 GPUs but the pipeline has 4 stages "
            "(one GPU per stage is needed)"});
  CHECK(errors(kBase + kCosts + topo + "communication: {model: fixed-delay}\n")[0] ==
        "s.yaml:5:3: error: topology: a topology is given but communication.model is fixed-delay; "
        "set 'model: "
        "topology' or remove the topology");
}

TEST_CASE("files: syntax errors, missing file, base dir") {
  CHECK(scenario_base_dir("scenarios/quickstart.yaml") == "scenarios");
  CHECK(scenario_base_dir("quickstart.yaml") == ".");
  CHECK_THROWS_AS(load_scenario_file("/nonexistent/x.yaml", test_registry()), InputError);
  auto e = errors("name: [t\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0].rfind("s.yaml:", 0) == 0);
  CHECK(errors("") == std::vector<std::string>{"s.yaml: error: the file is empty"});
}

TEST_CASE("the bad files under tests/errors give their expected first line") {
  const std::string dir = std::string(BUBBLESIM_SOURCE_DIR) + "/tests/errors/";
  for (const char* name : {"unknown_key", "duplicate_key", "missing_unit", "wrong_type",
                           "unknown_schedule", "wrong_length", "several_errors"}) {
    CAPTURE(name);
    std::ifstream expected_file(dir + name + ".expected");
    REQUIRE(expected_file);
    std::string expected;
    std::getline(expected_file, expected);
    std::string first;
    try {
      load_scenario_file(dir + name + ".yaml", Registry::with_builtins());
    } catch (const InputError& e) {
      first = e.diagnostics().front().render();
    }
    // The .expected files name the file relative to the repository root, as the CLI test runs it.
    const std::string relative = std::string("tests/errors/") + name + ".yaml";
    if (first.rfind(dir, 0) == 0)
      first = relative + first.substr(dir.size() + std::string(name).size() + 5);
    CHECK(first == expected);
  }
}
