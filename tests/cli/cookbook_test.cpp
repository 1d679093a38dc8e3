// The cookbook (docs/cookbook.md): every scenario of scenarios/cookbook runs as shipped, each
// schedule without failing, and the CI gate's commands do what the recipe says: no regression
// against the scenario's own report, exit 1 against a slower change.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

TEST_CASE("every cookbook scenario runs, every schedule to the end") {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(source("scenarios/cookbook")))
    if (e.path().extension() == ".yaml") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"ci-gate.yaml", "compare-schedules.yaml",
                                          "fsdp-across-nodes.yaml", "long-context-cp.yaml",
                                          "megatron-3d.yaml", "moe-expert-parallel.yaml"});
  for (const std::string& f : files) {
    CAPTURE(f);
    Result r = run("run scenarios/cookbook/" + f + " --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& result : j["results"]) {
      CHECK(result["status"] == "ok");
      CHECK(result["simulation"]["tokens_per_s_per_gpu"].get<double>() > 0);
    }
  }
}

namespace {

// simulation.NAME of each schedule of a cookbook scenario, by label.
std::map<std::string, nlohmann::json> simulations(const std::string& file) {
  Result r = run("run scenarios/cookbook/" + file + " --format json");
  REQUIRE(r.code == 0);
  std::map<std::string, nlohmann::json> out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& result : report["results"])
    out[result["label"].get<std::string>()] = result["simulation"];
  return out;
}

}  // namespace

// What each recipe's text says of it, as relations that hold whatever the default costs are.
TEST_CASE("the cookbook's recipes show what their text says") {
  SUBCASE("comparing schedules: every other schedule idles less than 1F1B, ZB-H2 less than ZB-H1") {
    // 1F1B's bubble is (p - 1) / (m + p - 1) of the span; interleaving divides the warm-up by the
    // chunks, the zero-bubble schedules fill it with weight-gradient ops, ZB-H2 (more memory)
    // more of it than ZB-H1.
    auto s = simulations("compare-schedules.yaml");
    REQUIRE(s.size() == 6);
    const double base = s.at("1f1b")["bubble_ratio"];
    for (const auto& [label, sim] : s)
      if (label != "1f1b") CHECK_MESSAGE(sim["bubble_ratio"].get<double>() < base, label);
    CHECK(s.at("zb-h2")["bubble_ratio"].get<double>() <
          s.at("zb-h1")["bubble_ratio"].get<double>());
  }
  SUBCASE("Megatron 3D: interleaving with 5 chunks shrinks the bubble; TP and DP communicate") {
    auto s = simulations("megatron-3d.yaml");
    const nlohmann::json& inter = s.at("interleaved-1f1b(chunks=5)");
    const nlohmann::json& plain = s.at("1f1b");
    CHECK(inter["bubble_ratio"].get<double>() < plain["bubble_ratio"].get<double>());
    for (const nlohmann::json* sim : {&inter, &plain}) {
      CHECK((*sim)["tp_comm_s"].get<double>() > 0);
      CHECK((*sim)["dp_sync_s"].get<double>() > 0);
    }
  }
  SUBCASE("FSDP: every backward reduce-scatters its gradients; no second sync at the end") {
    Result r = run("run scenarios/cookbook/fsdp-across-nodes.yaml --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json& sim = j["results"][0]["simulation"];
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& c : sim["collectives"]) by_name[c["name"].get<std::string>()] = c;
    // The gathers before F and B and the reduce-scatter after B, each timed on the NICs.
    for (const char* name : {"dp all-gather stage 0 (per F op)", "dp all-gather stage 0 (per B op)",
                             "dp reduce-scatter stage 0 (per B op)"}) {
      REQUIRE_MESSAGE(by_name.count(name) == 1, name);
      CHECK(by_name[name]["simulated_s"].get<double>() > 0);
    }
    CHECK(sim["dp_sync_s"].get<double>() == 0);     // FSDP runs no end-of-step gradient collective
    CHECK(sim["bubble_ratio"].get<double>() == 0);  // one stage: no pipeline bubble
  }
  SUBCASE("MoE: the expert all-to-all runs in every schedule") {
    for (const auto& [label, sim] : simulations("moe-expert-parallel.yaml"))
      CHECK_MESSAGE(sim["a2a_s"].get<double>() > 0, label);
  }
  SUBCASE("long context: TP inside the node, the gradients synced over the CP group") {
    // dp = 16 / (tp 4 x cp 4) = 1, yet the 4 CP ranks hold the same weights and sync them.
    const nlohmann::json sim = simulations("long-context-cp.yaml").at("1f1b");
    CHECK(sim["tp_comm_s"].get<double>() > 0);
    CHECK(sim["dp_sync_s"].get<double>() > 0);
  }
}

TEST_CASE("the cookbook's CI gate: no regression against itself, exit 1 against a slower change") {
  TempDir dir;
  REQUIRE(
      run("run scenarios/cookbook/ci-gate.yaml --format json -o " + dir.file("base.json")).code ==
      0);
  REQUIRE(
      run("run scenarios/cookbook/ci-gate.yaml --format json -o " + dir.file("now.json")).code ==
      0);
  Result same = run("regress --baseline " + dir.file("base.json") + " --current " +
                    dir.file("now.json") + " --tolerance 2%");
  CHECK(same.code == 0);
  // The same layout on GPUs held at 80% of their GEMM efficiency: slower, a regression.
  std::string slower = slurp(source("scenarios/cookbook/ci-gate.yaml"));
  const std::string gpu = "cluster: {gpu: {preset: h100-sxm}}";
  REQUIRE(slower.find(gpu) != std::string::npos);
  slower.replace(slower.find(gpu), gpu.size(),
                 "cluster: {gpu: {preset: h100-sxm, efficiency: {gemm_max: 0.5}}}");
  std::ofstream(dir.file("slower.yaml")) << slower;
  REQUIRE(
      run("run " + dir.file("slower.yaml") + " --format json -o " + dir.file("slow.json")).code ==
      0);
  Result worse = run("regress --baseline " + dir.file("base.json") + " --current " +
                     dir.file("slow.json") + " --tolerance 2%");
  CHECK(worse.code == 1);
  CHECK(worse.out.find("regress") != std::string::npos);
}
