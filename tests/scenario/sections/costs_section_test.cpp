// The `costs` section reader: per-stage values, the recompute default, overrides of derived costs,
// the sync inputs, and its errors.
#include "sim/scenario/sections/costs_section.h"

#include <doctest/doctest.h>

#include "sim/runner/resolve.h"
#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

const std::string kModel =
    "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, micro_batch_size: 1, vocab: "
    "1000, dtype: bf16, attention: standard}\n"
    "cluster: {gpu: {flops: 100TFLOPS, efficiency: 0.5, memory: 80GiB}}\n";

}  // namespace

TEST_CASE("costs: a scalar for every stage or a list with one value per stage") {
  Scenario sc =
      load(kBase +
           "costs: {forward: [1ms, 2ms], backward_input: 2ms, activation_memory: [1GiB, 2GiB]}\n");
  CHECK(sc.costs.profile.stages[0].forward.ps() == 1'000'000'000);
  CHECK(sc.costs.profile.stages[1].forward.ps() == 2'000'000'000);
  CHECK(sc.costs.profile.stages[1].recompute.ps() == 2'000'000'000);  // R defaults to F
  CHECK(sc.costs.profile.stages[0].backward_input.ps() == 2'000'000'000);
  CHECK(sc.costs.profile.stages[1].activation.count() == 2LL << 30);
  CHECK(sc.costs.profile.stages[0].backward_weight == Time::zero());
  CHECK(sc.costs.source == "explicit");
}

TEST_CASE("costs: gradient_bytes and optimizer_step are kept for the resolve step") {
  Scenario sc = load(kBase +
                     "costs: {forward: 1ms, backward_input: 2ms, gradient_bytes: [1GiB, 2GiB], "
                     "optimizer_step: 3ms}\n");
  CHECK(sc.parallelism.given.gradient_bytes ==
        std::vector<Bytes>{Bytes(1LL << 30), Bytes(2LL << 30)});
  CHECK(sc.parallelism.given.optimizer_step == std::vector<Time>(2, Time::from_ps(3'000'000'000)));
}

TEST_CASE("costs: lists of the wrong length, missing keys, M_W > M_B") {
  CHECK(errors(kBase + "costs: {forward: [1ms, 2ms, 3ms], backward_input: 2ms}\n") ==
        std::vector<std::string>{
            "s.yaml:3:18: error: costs.forward: expected a single value or a list of 2 values "
            "(one per pipeline stage), got 3 values"});
  CHECK(errors(kBase + "costs: {forward: {a: 1ms}, backward_input: 2ms}\n") ==
        std::vector<std::string>{
            "s.yaml:3:18: error: costs.forward: expected a single value or a list with one value "
            "per pipeline stage, got a mapping"});
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
}

TEST_CASE("costs: transformer-derived (by the resolve step), overridden key by key") {
  Scenario sc = load(kBase + kModel);
  const CostProfile derived = resolve(sc).costs;
  REQUIRE(derived.stages.size() == 2);
  CHECK(derived.stages[0].forward.ps() == 2748779069);
  CHECK(derived.stages[1].forward.ps() == 2832665149);
  CHECK(derived.stages[0].activation.count() == 813694976 + 2097152);  // + embedding dropout mask
  CHECK(sc.costs.source == "transformer");

  Scenario over = load(kBase + kModel + "costs: {backward_weight: [0s, 1ms], p2p_bytes: 1MiB}\n");
  const CostProfile mixed = resolve(over).costs;
  CHECK(over.costs.source == "transformer+explicit");
  CHECK(mixed.stages[0].forward.ps() == 2748779069);
  CHECK(mixed.stages[0].backward_weight == Time::zero());
  CHECK(mixed.stages[1].backward_weight.ps() == 1'000'000'000);
  CHECK(mixed.stages[1].p2p.count() == 1 << 20);
}
