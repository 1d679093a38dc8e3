// A scenario runs on a topology read from GraphML or GraphViz DOT exactly as on the same cluster
// written in YAML (docs/topologies.md, "Topologies from GraphML and DOT files"): every op's
// times, the iteration time and the data-parallel sync over the NICs are the same.
#include <doctest/doctest.h>

#include <string>

#include "scenario_run_support.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

// Two stages on one node's two GPUs (NVLink), dp 2 with the second replica on the other node: the
// gradient all-reduce crosses the NICs and the leaf switch.
ScenarioRun run_on(const std::string& topology) {
  const std::string yaml = R"(
name: graph-topology
pipeline: {stages: 2, microbatches: 4}
costs: {forward: 1ms, backward_input: 1ms, backward_weight: 0.5ms, p2p_bytes: 64MiB,
        gradient_bytes: 256MiB}
communication: {model: topology}
topology: )" + topology + R"(
parallelism: {dp: 2, order: [tp, pp, dp]}
schedules: [1f1b, zb-h1]
)";
  return run_scenario(
      load_scenario_string(yaml, "graph.yaml", source("tests/topologies/data"), registry()),
      registry());
}

}  // namespace

TEST_CASE("GraphML, DOT and YAML topologies of one cluster give the same replay") {
  const ScenarioRun yaml = run_on("two_nodes_topology.yaml");
  const ScenarioRun graphml = run_on("two_nodes.graphml");
  const ScenarioRun dot = run_on("two_nodes.dot");
  for (const char* schedule : {"1f1b", "zb-h1"}) {
    const SimulationResult& expected = run_named(yaml, schedule).simulation;
    REQUIRE(expected.status == RunStatus::Ok);
    // The gradient all-reduce of 256 MiB between the nodes runs over the NICs: it costs time.
    CHECK(expected.metrics.sync.dp_sync > Time::from_ps(0));
    for (const ScenarioRun* other : {&graphml, &dot}) {
      const SimulationResult& got = run_named(*other, schedule).simulation;
      CHECK(got.metrics.iteration.iteration_time == expected.metrics.iteration.iteration_time);
      CHECK(got.metrics.makespan == expected.metrics.makespan);
      CHECK(got.metrics.sync.dp_sync == expected.metrics.sync.dp_sync);
      REQUIRE(got.timings.size() == expected.timings.size());
      for (std::size_t d = 0; d < got.timings.size(); ++d) {
        REQUIRE(got.timings[d].size() == expected.timings[d].size());
        for (std::size_t i = 0; i < got.timings[d].size(); ++i)
          CHECK(got.timings[d][i] == expected.timings[d][i]);
      }
    }
  }
}
