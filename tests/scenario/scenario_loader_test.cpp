// The loader as a whole: the quickstart form, the top-level keys, errors of several sections at
// once in file order, files. Each section reader has its own tests in sections/.
#include "sim/scenario/scenario_loader.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "schedules/builtin_generators.h"
#include "sim/scenario/sections/section_reader.h"
#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("the quickstart form loads with defaults filled") {
  Scenario sc = load(
      "name: example\n"
      "description: the ZB paper's 1.5B model\n"
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
  CHECK(sc.labels.name == "example");
  CHECK(sc.labels.description == "the ZB paper's 1.5B model");
  CHECK(sc.labels.file == "s.yaml");
  CHECK(sc.stages == 8);
  CHECK(sc.microbatches == 24);
  REQUIRE(sc.costs.profile.stages.size() == 8);
  CHECK(sc.costs.source == "explicit");
  const StageCost& c = sc.costs.profile.stages[7];
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
  CHECK_FALSE(sc.schedules[0].defaulted);
}

TEST_CASE("the allowed top-level keys are those of the registered section readers") {
  std::vector<std::string> keys;
  for (const SectionReader& reader : section_readers()) {
    CHECK(static_cast<bool>(reader.read));
    keys.insert(keys.end(), reader.keys.begin(), reader.keys.end());
  }
  CHECK(keys == std::vector<std::string>{
                    "name", "description", "pipeline", "model", "cluster", "costs", "parallelism",
                    "data_parallel", "overlap", "training", "communication", "topology",
                    "placement", "memory", "faults", "iteration", "variability", "schedules"});
}

TEST_CASE("several errors are reported at once, in file order") {
  auto e = errors(
      "name: t\n"
      "pipeline: {stages: 2, microbatches: many}\n"
      "costs: {forward: 1, backward_input: 2ms, colour: red}\n"
      "schedules: [gpip]\n"
      "extra: 1\n");
  CHECK(e ==
        std::vector<std::string>{
            "s.yaml:2:37: error: pipeline.microbatches: expected an integer, got 'many'",
            "s.yaml:3:18: error: costs.forward: '1' has no unit: a duration needs one of ps, ns, "
            "us, ms, s, min, h (e.g. 1.5ms)",
            "s.yaml:3:42: error: costs.colour: unknown key 'colour' (allowed: forward, "
            "backward_input, backward_weight, recompute, fused_forward_backward, "
            "activation_memory, weight_grad_memory, stage_input_memory, p2p_bytes, "
            "static_memory, profile, gradient_bytes, optimizer_step, per, per_layer)",
            "s.yaml:4:13: error: schedules[0]: unknown schedule 'gpip'; did you mean 'gpipe'? "
            "(known: gpipe, 1f1b, interleaved)",
            "s.yaml:5:1: error: extra: unknown key 'extra' (allowed: name, description, "
            "pipeline, model, cluster, costs, parallelism, data_parallel, overlap, training, "
            "communication, "
            "topology, placement, memory, faults, iteration, variability, schedules)",
        });
}

TEST_CASE("files: syntax errors, missing file, base dir") {
  CHECK(scenario_base_dir("scenarios/quickstart.yaml") == "scenarios");
  CHECK(scenario_base_dir("quickstart.yaml") == ".");
  CHECK_THROWS_AS(load_scenario_file("/nonexistent/x.yaml", test_registry()), InputError);
  auto e = errors("name: [t\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0].rfind("s.yaml:", 0) == 0);
  CHECK(errors("") == std::vector<std::string>{"s.yaml: error: the file is empty"});
  CHECK(errors("- a\n- b\n") ==
        std::vector<std::string>{"s.yaml:1:1: error: expected a mapping, got a list"});
}

TEST_CASE("a byte-order mark starting the file is dropped; one inside a key is shown") {
  // Editors on Windows start UTF-8 files with U+FEFF: the file loads as without it, columns too.
  const std::string body =
      "name: bom\npipeline: {stages: 2, microbatches: 4}\n"
      "costs: {forward: 1ms, backward_input: 2ms}\n";
  Scenario sc = load("\xEF\xBB\xBF" + body);
  CHECK(sc.labels.name == "bom");
  CHECK(errors("\xEF\xBB\xBF" + body + "bogus: 1\n") == errors(body + "bogus: 1\n"));
  // Inside a key it is a character of the key: named as \uFEFF, with the key it hides.
  const std::vector<std::string> e = errors(
      "name: bom\npipeline: {stages: 2, microbatches: 4}\n"
      "costs: {\xEF\xBB\xBF"
      "forward: 1ms, backward_input: 2ms}\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0] ==
        "s.yaml:3:9: error: costs.\\uFEFFforward: key '\\uFEFFforward' holds an invisible "
        "character (shown as \\u and its code point); without it the key is 'forward': delete it");
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
      load_scenario_file(dir + name + ".yaml", builtin_registry());
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
