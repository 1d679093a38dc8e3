// The real-runs mechanisms seen through the CLI's JSON report (docs/iterations.md,
// docs/parallelism.md).
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

namespace {

/// label -> simulation object of `bubblesim run FILE --format json`.
std::map<std::string, nlohmann::json> simulations(const std::string& file) {
  const Result r = run("run " + file + " --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> out;
  for (const auto& result : report["results"]) out[result["label"]] = result["simulation"];
  return out;
}

}  // namespace

TEST_CASE("the tabular-abstraction configuration: Chimera wins on NVLink, loses 100x slower") {
  // Only a model, a GPU and a topology: Chimera's replica all-reduce is derived from the model's
  // gradient bytes, not from a data_parallel section.
  auto fast = simulations("scenarios/tabular/chimera_fast_network.yaml");
  auto slow = simulations("scenarios/tabular/chimera_slow_network.yaml");
  for (auto* sims : {&fast, &slow}) {
    CHECK((*sims)["chimera"]["replica_sync_s"].get<double>() > 0.0);
    CHECK((*sims)["1f1b"]["replica_sync_s"].get<double>() == 0.0);
  }
  CHECK(fast["chimera"]["iteration_time_s"].get<double>() <
        fast["1f1b"]["iteration_time_s"].get<double>());
  CHECK(slow["chimera"]["iteration_time_s"].get<double>() >
        slow["1f1b"]["iteration_time_s"].get<double>());
}

TEST_CASE(
    "Llama-3-70B on 64 H100s from the presets: every schedule fits, static memory by ZeRO-1") {
  const Result r = run("run scenarios/llama3-70b-h100.yaml --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  CHECK(report["results"].size() == 5);
  for (const auto& result : report["results"]) CHECK(result["status"] == "ok");
  // A middle stage: 10 layers of (Wq, Wo: h^2 each; Wk, Wv: h x 1024; gate, up, down: h x 28672)
  // split 4 ways, plus two RMSNorm vectors kept whole, times bf16 weights (2) + fp32 gradients
  // (4) + fp32 master weights and Adam moments (12) sharded over dp = 2.
  const double h = 8192, f = 28672, kv_width = 8 * 128;
  const double split = 2 * h * h + 2 * h * kv_width + 3 * h * f;
  const double per_gpu = 10 * (split / 4 + 2 * h);
  const auto& statics = report["scenario"]["costs"]["static_memory_bytes"];
  CHECK(statics[3].get<double>() == doctest::Approx(per_gpu * (2 + 4 + 12.0 / 2)).epsilon(1e-6));
}

TEST_CASE("costs derived from a model are shown per stage by run (text, Markdown) and validate") {
  const std::string heading = "per-GPU stage costs derived from the model";
  for (const std::string& command :
       {std::string("validate scenarios/llama3-70b-h100.yaml"),
        std::string("run scenarios/llama3-70b-h100.yaml --schedule 1f1b")}) {
    CAPTURE(command);
    const Result r = run(command);
    REQUIRE(r.code == 0);
    const std::size_t at = r.out.find(heading);
    REQUIRE(at != std::string::npos);
    // The table: a heading line, a rule, then one row per stage 0..7.
    const std::string table = r.out.substr(at);
    CHECK(table.find("T_F ms") != std::string::npos);
    CHECK(table.find("\n7  ") != std::string::npos);
  }
  const Result md = run("run scenarios/llama3-70b-h100.yaml --schedule 1f1b --format md");
  REQUIRE(md.code == 0);
  CHECK(md.out.find("### Per-GPU stage costs derived from the model") != std::string::npos);
  // Explicit costs are the scenario's own: no table.
  const Result plain = run("run scenarios/quickstart.yaml");
  CHECK(plain.out.find(heading) == std::string::npos);
}
