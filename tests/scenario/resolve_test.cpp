// The resolve step (tools/runner/resolve.h): every derived value computed once, the inputs built
// from it, the resolved-scenario JSON, and how many replays a schedule takes.
#include "tools/runner/resolve.h"

#include <doctest/doctest.h>

#include "schedules/builtin_generators.h"
#include "tests/scenario/scenario_test_support.h"
#include "tools/report/resolved_scenario_json.h"
#include "tools/runner/scenario_runner.h"

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
