// The `iteration` section reader and communication.p2p.
#include "sim/scenario/sections/iteration_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("iteration: two iterations with a global barrier unless the file says otherwise") {
  Scenario plain = load(kBase + kCosts);
  CHECK(plain.iteration.count == 2);
  CHECK(plain.iteration.barrier == IterationBarrier::Global);
  CHECK_FALSE(plain.communication.behaviours.has("communication.p2p"));  // the default, async
  Scenario given = load(kBase + kCosts +
                        "iteration: {count: 3, barrier: none}\n"
                        "communication: {delay: 1ms, p2p: blocking}\n");
  CHECK(given.iteration.count == 3);
  CHECK(given.iteration.barrier == IterationBarrier::None);
  CHECK(given.communication.behaviours.text("communication.p2p") == "blocking");
  Scenario topo = load(kBase + kCosts + kTopology + "communication: {p2p: blocking}\n");
  CHECK(topo.communication.behaviours.text("communication.p2p") == "blocking");
}

TEST_CASE("iteration errors") {
  CHECK(errors(kBase + kCosts + "iteration: {count: 0}\n") ==
        std::vector<std::string>{"s.yaml:4:20: error: iteration.count: 0 is out of range "
                                 "(allowed: 1 to 1000)"});
  CHECK(errors(kBase + kCosts + "iteration: {barrier: sometimes}\n") ==
        std::vector<std::string>{"s.yaml:4:22: error: iteration.barrier: 'sometimes' is not "
                                 "allowed (allowed: global, none)"});
  CHECK(errors(kBase + kCosts + "iteration: {cont: 2}\n") ==
        std::vector<std::string>{"s.yaml:4:13: error: iteration.cont: unknown key 'cont'; did "
                                 "you mean 'count'? (allowed: count, barrier, checkpoint)"});
  // A checkpoint writes the model's parameters and optimizer state: without `model:` there is
  // nothing to size it by; an interval below one iteration is refused.
  const std::vector<std::string> no_model =
      errors(kBase + kCosts + "iteration: {checkpoint: {interval: 10, write_bandwidth: 1GB/s}}\n");
  REQUIRE(no_model.size() == 1);
  CHECK(no_model[0].find("iteration.checkpoint") != std::string::npos);
  CHECK(no_model[0].find("it needs 'model:'") != std::string::npos);
  const std::vector<std::string> zero =
      errors(kBase + kCosts + "iteration: {checkpoint: {interval: 0, write_bandwidth: 1GB/s}}\n");
  REQUIRE(zero.size() == 1);
  CHECK(zero[0].find("iteration.checkpoint.interval: 0 is out of range") != std::string::npos);
  CHECK(errors(kBase + kCosts + "communication: {p2p: sync}\n") ==
        std::vector<std::string>{
            "s.yaml:4:22: error: communication.p2p: 'sync' is not allowed; did you "
            "mean 'async'? (allowed: async, blocking)"});
}
