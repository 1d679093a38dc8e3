// The routed experts' gradient sync under expert parallelism (docs/moe.md): a GPU's
// experts are held by the dp / ep replicas of the same EP rank (and every TP rank), so their
// gradients sync over that group while the dense parameters sync over the whole dp group.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "scenario_run_support.h"
#include "schedules/builtin_generators.h"
#include "sim/report/json_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

// deepseek-v2-lite cut to 4 layers on 2 stages: stage 0 holds the dense layer 0 and MoE layer 1,
// stage 1 the MoE layers 2 and 3. dp 4 over four nodes of two GPUs (replica r on node r).
std::string lite(int ep, int zero) {
  std::string par = "parallelism: {dp: 4, zero: " + std::to_string(zero);
  if (ep > 1) par += ", ep: " + std::to_string(ep);
  return "name: lite\n" + par + "}\n" + R"(
pipeline: {stages: 2, microbatches: 4}
model: {preset: deepseek-v2-lite, layers: 4, seq_len: 1024}
cluster: {gpu: {preset: h800}}
topology: {builder: multi-node, nodes: 4, gpus_per_node: 2,
           nvlink: {bandwidth: 160GB/s, latency: 1us}, pcie: {bandwidth: 64GB/s, latency: 1us},
           gpus_per_pcie_switch: 1, nic: {bandwidth: 50GB/s, latency: 2us},
           network: {latency: 1us}}
data_parallel: {bucket: 64MiB}
schedules: [1f1b]
)";
}

nlohmann::json report(int ep, int zero) {
  const Scenario sc = load_scenario_string(lite(ep, zero), "lite.yaml", ".", builtins());
  nlohmann::json j = scenario_report_json(sc, run_scenario(sc, builtins()));
  REQUIRE(j["results"][0]["status"] == "ok");
  return j;
}

/// The 1F1B result's collectives by name.
std::map<std::string, nlohmann::json> collectives(const nlohmann::json& j) {
  return scenario_test::collectives_by_name(j);
}

double num(const nlohmann::json& c, const char* key) { return scenario_test::number(c, key); }

// All 64 routed experts of one MoE layer: SwiGLU MLPs of 3 x 2048 x 1408 weights each.
constexpr double kExpertsPerLayer = 64.0 * 3.0 * 2048.0 * 1408.0;
constexpr double kMoeLayers[2] = {1.0, 2.0};  // per stage

}  // namespace

TEST_CASE("expert gradients: all-reduced over the dp / ep replicas, dense ones over dp") {
  const auto ep1 = collectives(report(1, 0));
  const auto ep2 = collectives(report(2, 0));
  const auto ep4 = collectives(report(4, 0));
  for (int s = 0; s < 2; ++s) {
    const std::string dense = "dp all-reduce stage " + std::to_string(s);
    const std::string experts = "expert dp all-reduce stage " + std::to_string(s);
    // Without EP every parameter syncs over the 4 replicas (no expert line).
    REQUIRE(ep1.count(dense) == 1);
    CHECK(ep1.count(experts) == 0);
    CHECK(num(ep1.at(dense), "ranks") == 4);
    // fp32 gradients: 4 bytes per parameter on the GPU, E / ep experts per MoE layer.
    const double all_experts = kMoeLayers[s] * kExpertsPerLayer * 4.0;
    REQUIRE(ep2.count(experts) == 1);
    CHECK(num(ep2.at(experts), "ranks") == 2);  // dp / ep replicas hold the same experts
    CHECK(num(ep2.at(experts), "bytes") == doctest::Approx(all_experts / 2).epsilon(1e-12));
    // The dense parameters are the same with and without EP, over all dp ranks.
    CHECK(num(ep2.at(dense), "ranks") == 4);
    CHECK(std::abs(num(ep2.at(dense), "bytes") - (num(ep1.at(dense), "bytes") - all_experts)) <=
          2.0);
    // The two replicas of an EP rank sit on two nodes: a ring all-reduce of two ranks moves the
    // whole gradient over each NIC (50 GB/s) at least once.
    CHECK(num(ep2.at(experts), "simulated_s") >= num(ep2.at(experts), "bytes") / 50e9);
    // ep = dp: each GPU holds its experts alone; their gradients need no sync.
    REQUIRE(ep4.count(experts) == 1);
    CHECK(num(ep4.at(experts), "ranks") == 1);
    CHECK(num(ep4.at(experts), "bytes") == doctest::Approx(all_experts / 4).epsilon(1e-12));
    CHECK(num(ep4.at(experts), "simulated_s") == 0.0);
    CHECK(num(ep4.at(dense), "bytes") == num(ep2.at(dense), "bytes"));
  }
}

TEST_CASE("expert gradients under ZeRO-1: reduce-scattered over their group, state sharded by it") {
  const nlohmann::json j2 = report(2, 1);
  const nlohmann::json j4 = report(4, 1);
  const auto ep2 = collectives(j2);
  for (int s = 0; s < 2; ++s) {
    const std::string name = "expert dp reduce-scatter stage " + std::to_string(s);
    REQUIRE(ep2.count(name) == 1);
    CHECK(num(ep2.at(name), "ranks") == 2);
    // bf16 weights 2 + fp32 gradients 4 + Adam's 12 bytes sharded over the group holding the
    // experts: dp / ep = 2 GPUs at ep 2, none to share with at ep = dp = 4.
    const double params2 = kMoeLayers[s] * kExpertsPerLayer / 2;
    const double params4 = kMoeLayers[s] * kExpertsPerLayer / 4;
    const auto& costs2 = j2["scenario"]["costs"];
    const auto& costs4 = j4["scenario"]["costs"];
    CHECK(costs2["expert_static_memory_bytes"][s].get<double>() ==
          doctest::Approx(params2 * (2 + 4 + 12.0 / 2)).epsilon(1e-9));
    CHECK(costs4["expert_static_memory_bytes"][s].get<double>() ==
          doctest::Approx(params4 * 18.0).epsilon(1e-9));
    // The dense part of the static memory keeps the dp group's sharding: the same at ep 2 and 4.
    const double dense2 = costs2["static_memory_bytes"][s].get<double>() -
                          costs2["expert_static_memory_bytes"][s].get<double>();
    const double dense4 = costs4["static_memory_bytes"][s].get<double>() -
                          costs4["expert_static_memory_bytes"][s].get<double>();
    CHECK(std::abs(dense2 - dense4) <= 2.0);
  }
}

TEST_CASE("expert data-parallel groups follow parallelism.order") {
  ParallelismSpec par;
  par.dp = 4;
  par.tp = 2;
  par.ep = 2;
  // [tp, pp, dp] on 2 stages: rank (s, r, t) = t + 2 (s + 2 r). EP rank 0 of stage 1 is dp ranks
  // 0 and 2, each with both TP ranks (the experts are not split by TP).
  CHECK(par.expert_group(2, 1, 0) == std::vector<std::size_t>{2, 3, 10, 11});
  // [tp, ep, dp, pp]: dp rank r is EP rank r mod 2 (stride 2) of replica group r / 2 (stride 4),
  // stage stride 8. EP rank 1 of stage 1: dp ranks 1 and 3.
  par.order = {"tp", "ep", "dp", "pp"};
  CHECK(par.expert_group(2, 1, 1) == std::vector<std::size_t>{10, 11, 14, 15});
}
