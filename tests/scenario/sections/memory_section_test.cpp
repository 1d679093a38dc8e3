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
                     "recompute: {policy: full, fraction: 0.25}, "
                     "offload: {policy: full, prefetch: 2, bandwidth: 25GB/s}}\n");
  CHECK(sc.memory.release == ReleaseConvention::BackwardComplete);
  CHECK(sc.memory.host_capacity == Bytes(1LL << 40));
  CHECK(sc.memory.recompute.policy == MemoryPolicy::Full);
  CHECK(sc.memory.recompute.fraction == 0.25);
  CHECK(sc.memory.offload.policy == MemoryPolicy::Full);
  CHECK(sc.memory.offload.prefetch == 2);
  CHECK(sc.memory.offload.d2h.empty());  // derived by the resolve step
  CHECK(sc.memory.offload_bandwidth->bytes_per_second() == doctest::Approx(25e9));
}

TEST_CASE("memory errors: passes and offloading without a host") {
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: selective, stages: [0]}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:49: error: memory.recompute.stages: 'stages' is only used with 'policy: "
            "full' (policy is 'selective'; selective recompute recomputes the attention core of "
            "every layer)"});
  CHECK(errors(kBase + kCosts + "memory: {recompute: {policy: full, stages: [1, 1]}}\n") ==
        std::vector<std::string>{
            "s.yaml:4:48: error: memory.recompute.stages[1]: stage 1 is listed twice"});
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
