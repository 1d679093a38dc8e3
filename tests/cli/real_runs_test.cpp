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
