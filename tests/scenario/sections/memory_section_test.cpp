// The `memory` section reader: budgets, host capacity, release, recompute and offload.
#include "sim/scenario/sections/memory_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("memory budgets: one value for every device, or one per device") {
  Scenario list = load(kBase + kCosts + "memory: {budget: [60GiB, 70GiB]}\n");
  CHECK(list.memory.budget.size() == 2);
  CHECK(memory_budget_of_device(list.memory, 1) == Bytes(70LL << 30));
  Scenario one = load(kBase + kCosts + "memory: {budget: 60GiB}\n");
  CHECK(one.memory.budget.size() == 1);
  CHECK(memory_budget_of_device(one.memory, 0) == Bytes(60LL << 30));
  CHECK(memory_budget_of_device(one.memory, 1) == Bytes(60LL << 30));
  Scenario none = load(kBase + kCosts);
  CHECK_FALSE(memory_budget_of_device(none.memory, 0).has_value());
  CHECK(errors(kBase + kCosts + "memory: {budget: [1GiB]}\n") ==
        std::vector<std::string>{
            "s.yaml:4:18: error: memory.budget: expected a single value or a list of 2 values "
            "(one per pipeline stage), got 1 values"});
  CHECK(errors(kBase + kCosts + "memory: {budget: 0B}\n") ==
        std::vector<std::string>{
            "s.yaml:4:18: error: memory.budget: a memory budget must be positive, got '0B'"});
}

TEST_CASE("memory: release, host capacity and the passes' settings") {
  Scenario sc = load(kBase + kCosts +
                     "memory: {release: backward-complete, host_capacity: 1TiB, "
                     "recompute: {policy: full, granularity: stage, fraction: 0.25}, "
                     "offload: {policy: full, prefetch: 2, bandwidth: 25GB/s}}\n");
  CHECK(sc.memory.release == ReleaseConvention::BackwardComplete);
  CHECK(sc.memory.host_capacity == Bytes(1LL << 40));
  CHECK(sc.memory.recompute.policy == MemoryPolicy::Full);
  CHECK(sc.memory.recompute.granularity == RecomputeGranularity::Stage);
  CHECK_FALSE(sc.memory.recompute.in_backward());
  CHECK(sc.memory.recompute.fraction == 0.25);
  CHECK(sc.memory.offload.policy == MemoryPolicy::Full);
  CHECK(sc.memory.offload.prefetch == 2);
  CHECK(sc.memory.offload.d2h.empty());  // derived by the resolve step
  CHECK(sc.memory.offload_bandwidth->bytes_per_second() == doctest::Approx(25e9));
}

TEST_CASE("memory.recompute: full recompute runs per unit inside B unless granularity is stage") {
  const Scenario sc = load(kBase + kCosts + "memory: {recompute: {policy: full}}\n");
  CHECK(sc.memory.recompute.granularity == RecomputeGranularity::Layer);
  CHECK(sc.memory.recompute.in_backward());
  CHECK(load(kBase + kCosts + "memory: {recompute: {policy: selective}}\n")
            .memory.recompute.in_backward());
  // Keys that do not apply are refused, naming what they apply to.
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: full, stages: [0]}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:44: error: memory.recompute.stages: 'stages' is only used with "
            "'granularity: stage' (the R op of chosen table stages); recompute per layer applies "
            "to every stage as frameworks apply it: recompute fewer layers with 'layers' or "
            "'every'"});
  CHECK(errors(kBase + kCosts +
               "memory: {recompute: {policy: full, granularity: stage, every: "
               "2}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:63: error: memory.recompute.every: 'every' is only used with 'granularity: "
            "layer' (the stage's R op recomputes its layers at once)"});
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: op, every: 2}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:30: error: memory.recompute.policy: 'policy: op' (torchtitan's per-op "
            "selective recompute) cannot be priced here: it needs 'model:' (the layer's ops and "
            "their outputs come from it)",
            "s.yaml:4:41: error: memory.recompute.every: 'every' is only used with 'policy: "
            "full' (policy is 'op'; op recompute decides per op in every layer)"});
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: full, granularity: block}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:49: error: memory.recompute.granularity: 'block' is not allowed "
            "(allowed: layer, stage)"});
}

TEST_CASE("memory.recompute: op is refused where its save list is not modelled") {
  const std::string base = kBase + "cluster: {gpu: {preset: h100-sxm}}\n";
  CHECK(errors(base + "model: {preset: mixtral-8x7b, layers: 4}\n"
                      "memory: {recompute: {policy: op}}\n") ==
        std::vector<std::string>{
            "s.yaml:5:30: error: memory.recompute.policy: 'policy: op' (torchtitan's per-op "
            "selective recompute) cannot be priced here: model.moe: it is modelled for dense "
            "layers only"});
  // The framework's attention: Megatron-LM of 2021 ran the unfused core.
  CHECK(errors(base + "model: {preset: gpt3-175b, layers: 4, framework: megatron-lm-2021}\n"
                      "memory: {recompute: {policy: op}}\n") ==
        std::vector<std::string>{
            "s.yaml:5:30: error: memory.recompute.policy: 'policy: op' (torchtitan's per-op "
            "selective recompute) cannot be priced here: model.attention is 'standard': the save "
            "list keeps a fused attention kernel's output (SDPA, FlashAttention); use 'flash'"});
  CHECK(errors(base + "model: {preset: llama3-8b, layers: 4}\n"
                      "memory: {recompute: {policy: full, layers: 1, unit_layers: 2}}\n") ==
        std::vector<std::string>{
            "s.yaml:5:60: error: memory.recompute.unit_layers: give one of 'layers', "
            "'unit_layers' and 'every', not both 'layers' and 'unit_layers'"});
  const Scenario op = load(base +
                           "model: {preset: llama3-8b, layers: 4}\n"
                           "memory: {recompute: {policy: op}}\n");
  CHECK(op.memory.recompute.policy == MemoryPolicy::Op);
  CHECK(op.memory.recompute.in_backward());
}

TEST_CASE("memory errors: passes and offloading without a host") {
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: selective, stages: [0]}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:49: error: memory.recompute.stages: 'stages' is only used with 'policy: "
            "full' (policy is 'selective'; selective recompute recomputes the attention core of "
            "every layer)"});
  CHECK(errors(kBase + kCosts +
               "memory: {recompute: {policy: full, granularity: stage, stages: [1, 1]}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:68: error: memory.recompute.stages[1]: stage 1 is listed twice"});
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: full, layers: 2}}\n") ==
        std::vector<std::string>{"s.yaml:4:44: error: memory.recompute.layers: 'layers' needs "
                                 "'model:' (the layers of a stage and their forward come from "
                                 "it)"});
  CHECK(errors(kBase + kCosts + "memory: {offload: {policy: full}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:28: error: memory.offload.policy: cannot offload: fixed-delay communication "
            "has no host; give 'memory.offload.bandwidth' (a private PCIe link per GPU, e.g. "
            "25GB/s) or use a topology with a host vertex"});
  CHECK(errors(kBase + kCosts + kTopology +
               "memory: {offload: {policy: full, bandwidth: 1GB/s}}\n") ==
        std::vector<std::string>{
            "s.yaml:7:45: error: memory.offload.bandwidth: 'bandwidth' is only used with "
            "fixed-delay communication; with a topology the route from each GPU to its host "
            "gives the offload bandwidth"});
}
