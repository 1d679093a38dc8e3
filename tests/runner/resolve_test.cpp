// The resolve step (sim/runner/resolve.h): every derived value computed once, the inputs built
// from it, the resolved-scenario JSON, and how many replays a schedule takes.
#include "sim/runner/resolve.h"

#include <doctest/doctest.h>

#include "schedules/builtin_generators.h"
#include "sim/engine/collectives.h"
#include "sim/report/resolved_scenario_json.h"
#include "sim/runner/a2a_plan.h"
#include "sim/runner/scenario_runner.h"
#include "tests/scenario/chain_scenario.h"
#include "tests/scenario/scenario_test_support.h"
#include "topologies/topology_builders.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

}  // namespace

TEST_CASE("resolve: one budget means every device; a list is per device") {
  Scenario one = load(kBase + kCosts + "memory: {budget: 60GiB}\n");
  const ResolvedScenario r1 = resolve(one);
  CHECK(r1.memory_budget == std::vector<Bytes>(2, Bytes(60LL << 30)));
  Scenario list = load(kBase + kCosts + "memory: {budget: [60GiB, 70GiB]}\n");
  const ResolvedScenario r2 = resolve(list);
  CHECK(r2.memory_budget == std::vector<Bytes>{Bytes(60LL << 30), Bytes(70LL << 30)});
  // The generators, the engine and the JSON report see the same per-device values.
  CHECK(make_generator_input(r2, {}).memory_budget == r2.memory_budget);
  Table table;
  CHECK(make_engine_input(r2, table, {}, Replay::Simulated).memory_budget == r2.memory_budget);
  CHECK(make_engine_input(r2, table, {}, Replay::Idealized).memory_budget.empty());
  CHECK(resolved_scenario_json(r2)["memory"]["budget_bytes"][1] == 70LL << 30);
  CHECK(resolved_scenario_json(r1)["memory"]["budget_bytes"].size() == 2);
  CHECK(resolve(load(kBase + kCosts)).memory_budget.empty());
}

TEST_CASE("resolve: communication.delay is `delay` in the generator input and the engine input") {
  Scenario sc = load(kBase + kCosts + "communication: {model: fixed-delay, delay: 0.601ms}\n");
  const ResolvedScenario r = resolve(sc);
  CHECK(make_generator_input(r, {}).delay.ps() == 601'000'000);
  Table table;
  const EngineInput in = make_engine_input(r, table, {}, Replay::Simulated);
  REQUIRE(std::holds_alternative<FixedDelayNetwork>(in.network));
  CHECK(std::get<FixedDelayNetwork>(in.network).delay.ps() == 601'000'000);
  CHECK(std::holds_alternative<NoCostNetwork>(
      make_engine_input(r, table, {}, Replay::Idealized).network));
}

TEST_CASE("resolve: offload bandwidths from the route to the host, or the private link") {
  Scenario topo = load(kBase + kCosts + kTopology);
  const ResolvedScenario rt = resolve(topo);
  REQUIRE(rt.offload.d2h.size() == 2);
  CHECK(rt.offload.d2h[0].bytes_per_second() == doctest::Approx(32e9));
  CHECK(rt.offload.d2h[1].bytes_per_second() == doctest::Approx(10e9));  // via gpu0
  CHECK(make_generator_input(rt, {}).offload_h2d.size() == 2);
  Scenario fixed = load(kBase + kCosts + "memory: {offload: {policy: none, bandwidth: 25GB/s}}\n");
  const ResolvedScenario rf = resolve(fixed);
  CHECK(rf.offload.d2h == std::vector<Bandwidth>(2, Bandwidth::bytes_per_second(25e9)));
  CHECK(resolve(load(kBase + kCosts)).offload.d2h.empty());
}

TEST_CASE("resolve: the fault-free replay drops the faults and keeps the rest") {
  Scenario sc = load(kBase + kCosts + kTopology +
                     "faults: {stragglers: [{device: 1, slowdown: 2}], "
                     "links: [{between: [gpu0, gpu1], at: 1ms, bandwidth: 1GB/s}]}\n");
  const ResolvedScenario r = resolve(sc);
  Table table;
  const EngineInput faulty = make_engine_input(r, table, {}, Replay::Simulated);
  CHECK(faulty.compute_slowdown == std::vector<double>{1.0, 2.0});
  CHECK(faulty.link_faults.size() == 2);
  const EngineInput healthy = make_engine_input(r, table, {}, Replay::FaultFree);
  CHECK(healthy.compute_slowdown.empty());
  CHECK(healthy.link_faults.empty());
  REQUIRE(healthy.topology_network() != nullptr);
  CHECK(healthy.topology_network()->device_vertex == faulty.topology_network()->device_vertex);
}

TEST_CASE("the resolved-scenario JSON of the reports") {
  Scenario sc = load(
      "name: example\n"
      "pipeline: {stages: 8, microbatches: 24}\n"
      "costs: {forward: 18.522ms, backward_input: 18.086ms}\n"
      "communication: {model: fixed-delay, delay: 0.601ms}\n"
      "schedules: [gpipe, {name: interleaved, params: {slack: 1ms}}]\n");
  const nlohmann::json j = resolved_scenario_json(resolve(sc));
  CHECK(j["pipeline"]["stages"] == 8);
  CHECK(j["costs"]["source"] == "explicit");
  CHECK(j["costs"]["forward_s"].size() == 8);
  CHECK(j["costs"]["forward_s"][0].get<double>() == doctest::Approx(0.018522));
  CHECK(j["communication"]["model"] == "fixed-delay");
  CHECK(j["communication"]["delay_s"].get<double>() == doctest::Approx(0.000601));
  CHECK(j["schedules"][1]["name"] == "interleaved");
  CHECK(j["schedules"][1]["params"]["slack"].get<double>() == doctest::Approx(0.001));
  CHECK(j["memory"]["budget_bytes"].is_null());
  Scenario topo = load(kBase + kCosts + kTopology);
  CHECK(resolved_scenario_json(resolve(topo))["communication"]["placement"] ==
        nlohmann::json::array({"gpu0", "gpu1"}));
}

TEST_CASE("replays per schedule: 2, +1 with the offload pass, +1 with faults") {
  const std::string costs =
      "costs: {forward: 1ms, backward_input: 2ms, activation_memory: 1GiB}\n"
      "schedules: [1f1b]\n";
  auto replays = [&](const std::string& extra) {
    Scenario sc = load(kBase + costs + kTopology + extra, builtins());
    ScenarioRun run = run_scenario(sc, builtins());
    REQUIRE(run.runs.size() == 1);
    return run.runs[0].effort.replays;
  };
  CHECK(replays("") == 2);
  CHECK(replays("memory: {recompute: {policy: full}}\n") == 2);
  CHECK(replays("memory: {offload: {policy: full}}\n") == 3);
  CHECK(replays("faults: {stragglers: [{device: 1, slowdown: 2}]}\n") == 3);
  CHECK(replays("memory: {offload: {policy: full}}\n"
                "faults: {stragglers: [{device: 1, slowdown: 2}]}\n") == 4);
}

TEST_CASE("resolve: route estimates hold the neighbours' routes only (2p, never p^2)") {
  // p = 65536 stages asked for a p x p matrix (32 GiB of estimates, of which 2p are filled):
  // std::bad_alloc after 53 s before routes were estimated per pair. A 2000-GPU chain with p = 2000
  // here.
  const Scenario s = load(chain_scenario_yaml(2000, 2000, 4), builtins());
  const ResolvedScenario r = resolve(s);
  REQUIRE(r.routes.bandwidth.size() == 2 * 2000);
  REQUIRE(r.routes.latency.size() == 2 * 2000);
  const GeneratorInput in = make_generator_input(r, {});
  // Index 2a: from device a to a + 1; 2a + 1: to a - 1 (GeneratorInput::route_bandwidth).
  CHECK(in.route_bandwidth[2 * 0].bytes_per_second() == 50e9);      // 0 -> 1
  CHECK(in.route_bandwidth[2 * 1 + 1].bytes_per_second() == 50e9);  // 1 -> 0
  CHECK(in.route_latency[2 * 1999 + 1] == Time::from_seconds(1e-6));
  CHECK(in.route_bandwidth[2 * 0 + 1].bytes_per_second() == 0.0);  // device 0 has no device -1
  CHECK(in.route_bandwidth[2 * 1999].bytes_per_second() == 0.0);   // nor 1999 a device 2000
}

TEST_CASE("a general-form chain topology loads and runs (tests/bench: TopologyLoad/chain)") {
  const Scenario s = load(chain_scenario_yaml(5000, 8, 4), builtins());
  REQUIRE(s.communication.topology);
  CHECK(s.communication.topology->vertex_count() == 5000);
  CHECK(s.communication.topology->link_count() == 2 * 4999);
  const ScenarioRun run = run_scenario(s, builtins());
  REQUIRE(run.runs.size() == 1);
  CHECK(run.runs[0].simulation.status == RunStatus::Ok);
}

TEST_CASE("all-to-alls of groups with the same shape take the same time (timed once per shape)") {
  // resolve times each stage's EP all-to-all once per distinct shape: the shape must hold
  // everything the time depends on, so equal shapes give equal times and a different layout a
  // different shape.
  ClusterParams p;
  p.nodes = 4;
  p.node.gpus = 4;
  const Topology t = build_cluster(p);
  const std::vector<VertexId> all = t.gpus();
  const std::vector<VertexId> nodes01(all.begin(), all.begin() + 8),
      nodes23(all.begin() + 8, all.end());
  CHECK(all_to_all_shape(t, nodes01) == all_to_all_shape(t, nodes23));
  CHECK(simulate_all_to_all(t, nodes01, 8e6) == simulate_all_to_all(t, nodes23, 8e6));
  // Two GPUs on each of four nodes: the same size, another layout and another time.
  const std::vector<VertexId> spread{all[0], all[1], all[4],  all[5],
                                     all[8], all[9], all[12], all[13]};
  CHECK(all_to_all_shape(t, spread) != all_to_all_shape(t, nodes01));
  CHECK(simulate_all_to_all(t, spread, 8e6) != simulate_all_to_all(t, nodes01, 8e6));
  // Inside one node and inside another: the same shape.
  const std::vector<VertexId> node0(all.begin(), all.begin() + 4);
  const std::vector<VertexId> node1(all.begin() + 4, all.begin() + 8);
  CHECK(all_to_all_shape(t, node0) == all_to_all_shape(t, node1));
}
