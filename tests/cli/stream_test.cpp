// `run --stream` (docs/engine.md, "Streamed replay"): a schedule replayed from its order stream
// reports exactly what the table held in memory reports (the JSON report byte for byte apart from
// its timing fields), with --stream on and by default (auto); and what cannot be streamed is
// held (auto) or refused with the reason.
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

namespace {

const std::string kScenario = "tests/cli/stream/small.yaml";

/// The JSON report without what measures the run itself (wall time, generation time, rates) and
/// without the flag that says whether it streamed.
std::string without_timing(nlohmann::json report, bool streamed) {
  for (nlohmann::json& r : report["results"]) {
    CHECK(r["run"]["streamed"] == streamed);
    for (const char* k : {"wall_time_s", "generate_s", "events_per_s", "streamed"})
      r["run"].erase(k);
  }
  for (const char* k : {"wall_time_s", "setup_s", "events_per_s"}) report["run"].erase(k);
  return report.dump(2);
}

}  // namespace

TEST_CASE("a streamed run reports exactly what the run holding the table reports") {
  const Result held = run("run " + kScenario + " --format json --stream off");
  const Result on = run("run " + kScenario + " --format json --stream on");
  // auto streams a table with more ops than --max-ops (every schedule here has 96 or more).
  const Result beyond = run("run " + kScenario + " --format json --max-ops 90");
  REQUIRE(held.code == 0);
  REQUIRE(on.code == 0);
  REQUIRE(beyond.code == 0);
  const nlohmann::json held_json = nlohmann::json::parse(held.out);
  REQUIRE(held_json["results"].size() == 3);
  const std::string expected = without_timing(held_json, false);
  CHECK(without_timing(nlohmann::json::parse(on.out), true) == expected);
  CHECK(without_timing(nlohmann::json::parse(beyond.out), true) == expected);
  CHECK(on.err.empty());
  CHECK(beyond.err.find("note: 1f1b has 96 ops, more than --max-ops (90): replayed from its order "
                        "stream") != std::string::npos);
  // By default a table that can be streamed is streamed, without a note within --max-ops.
  const Result fits = run("run " + kScenario + " --format json");
  REQUIRE(fits.code == 0);
  CHECK(fits.err.empty());
  CHECK(without_timing(nlohmann::json::parse(fits.out), true) == expected);
  // A trace records every op: the run holds the tables and reports the same.
  TempDir dir;
  const Result traced = run("run " + kScenario + " --format json -q --trace '" +
                            dir.file("t.json") + "' --trace-combined");
  REQUIRE(traced.code == 0);
  CHECK(without_timing(nlohmann::json::parse(traced.out), false) == expected);
}

TEST_CASE("what a streamed replay cannot do is refused with the reason") {
  const Result zb = run("run " + kScenario + " --stream on --schedule zb-h1");
  CHECK(zb.code == 2);
  CHECK(zb.err.find("zb-h1: --stream on: it cannot be replayed as a stream: its generator cannot "
                    "emit its order as a stream") != std::string::npos);
  TempDir dir;
  const Result traced =
      run("run " + kScenario + " --max-ops 90 --trace '" + dir.file("t.json") + "'");
  CHECK(traced.code == 2);
  CHECK(traced.err.find("1f1b: 4 stages x 12 microbatches need at least 96 ops, more than the "
                        "limit of 90 (raise it with --max-ops); a streamed replay, which holds no "
                        "table, cannot replace it: --trace and --html record every op") !=
        std::string::npos);
  const Result off = run("run " + kScenario + " --max-ops 90 --stream off");
  CHECK(off.code == 2);
  CHECK(off.err.find("more than the limit of 90 (raise it with --max-ops)\n") != std::string::npos);
}
