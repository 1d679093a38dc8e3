// The `communication` + `topology` + `placement` section reader.
#include "sim/scenario/sections/communication_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("communication: fixed-delay by default, topology when one is given") {
  Scenario none = load(kBase + kCosts);
  CHECK(none.communication.kind == CommunicationKind::FixedDelay);
  CHECK(none.communication.delay == Time::zero());
  Scenario fixed = load(kBase + kCosts + "communication: {delay: 1ms}\n");
  CHECK(fixed.communication.delay.ps() == 1'000'000'000);
  Scenario topo = load(kBase + kCosts + kTopology);
  CHECK(topo.communication.kind == CommunicationKind::Topology);
}

TEST_CASE("communication errors without a topology") {
  CHECK(errors(kBase + kCosts + "communication: {model: foo}\n") ==
        std::vector<std::string>{"s.yaml:4:24: error: communication.model: 'foo' is not allowed "
                                 "(allowed: fixed-delay, topology)"});
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
  CHECK(errors(kBase + kCosts + "parallelism: {dp: 2}\n") ==
        std::vector<std::string>{
            "s.yaml:4:14: error: parallelism: parallelism and data_parallel need a topology "
            "(communication.model: topology)"});
}

TEST_CASE("topology and placement") {
  Scenario sc = load(kBase + kCosts + kTopology);
  REQUIRE(sc.communication.topology);
  REQUIRE(sc.communication.placement.size() == 2);
  CHECK(sc.communication.topology->vertex_name(sc.communication.placement[1]) == "gpu1");

  Scenario placed = load(kBase + kCosts + kTopology + "placement: [gpu2, gpu0]\n");
  CHECK(placed.communication.topology->vertex_name(placed.communication.placement[0]) == "gpu2");

  CHECK(errors(kBase + kCosts + kTopology + "placement: [gpu9x, host0]\n") ==
        std::vector<std::string>{"s.yaml:7:13: error: placement[0]: unknown vertex 'gpu9x'; did "
                                 "you mean 'gpu0'? (GPUs: gpu0, gpu1, gpu2)",
                                 "s.yaml:7:20: error: placement[1]: 'host0' is a host, not a GPU"});
  CHECK(errors(kBase + kCosts + kTopology + "placement: [gpu1, gpu1]\n") ==
        std::vector<std::string>{
            "s.yaml:7:19: error: placement[1]: GPU 'gpu1' is used twice (already by stage 0)"});
  CHECK(errors(kBase + kCosts + kTopology + "placement: [gpu1]\n") ==
        std::vector<std::string>{"s.yaml:7:12: error: placement: placement lists 1 GPUs for 2 "
                                 "pipeline stages (one GPU per stage)"});
  CHECK(errors("name: t\npipeline: {stages: 4, microbatches: 4}\n" + kCosts + kTopology) ==
        std::vector<std::string>{
            "s.yaml:5:3: error: topology: the topology has 3 GPUs but the pipeline has 4 stages "
            "(one GPU per stage is needed)"});
  CHECK(errors(kBase + kCosts + kTopology + "communication: {model: fixed-delay}\n")[0] ==
        "s.yaml:5:3: error: topology: a topology is given but communication.model is fixed-delay; "
        "set 'model: topology' or remove the topology");
}

TEST_CASE("placement with parallelism lists every rank in the order layout") {
  Scenario sc = load(kBase + kCosts + kTopology + "parallelism: {tp: 1, dp: 1}\n");
  CHECK(sc.parallelism.gpus == sc.communication.placement);
  CHECK(errors(kBase + kCosts + kTopology + "parallelism: {dp: 2}\n") ==
        std::vector<std::string>{"s.yaml:5:3: error: topology: the topology has 3 GPUs but the "
                                 "run needs 4 (pipeline 2 x dp 2 x tp 1)"});
}
