// `bubblesim explain NAME [SCENARIO]`: the plain form is the generator's description, the scenario
// form runs the schedule and its baselines at the scenario's memory budget (docs/optimizer.md).
#include "sim/runner/explain.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_support.h"
#include "schedules/builtin_generators.h"
#include "sim/report/catalog_report.h"
#include "sim/report/text_table.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using namespace bubblesim::cli_testing;

namespace {

const char* kSmall = "tests/cli/explain_p4m8.yaml";
const char* kPasses = "tests/cli/explain_memory_passes.yaml";

const nlohmann::json* row_of(const nlohmann::json& j, const std::string& schedule) {
  for (const nlohmann::json& r : j["comparison"]) {
    if (r["schedule"] == schedule) return &r;
  }
  return nullptr;
}

/// The comparison table's lines for `label` (those starting with it), joined.
std::string text_row(const std::string& out, const std::string& label) {
  std::istringstream in(out);
  std::string line;
  bool table = false;
  // The table folds into blocks at the width (each repeats the schedule): the row's lines joined.
  std::string row;
  while (std::getline(in, line)) {
    if (line.rfind("comparison at", 0) == 0) table = true;
    if (table && line.rfind(label + " ", 0) == 0) row += line;
  }
  return row;
}

}  // namespace

TEST_CASE("explain NAME without a scenario prints the schedule's description and parameters") {
  // The exact format is pinned in tests/report/catalog_report_test.cpp; here, that the command
  // prints it for built-ins with and without parameters, and nothing else.
  Registry registry = builtin_registry();
  for (const char* name : {"1f1b", "optimized", "interleaved-1f1b"}) {
    CAPTURE(name);
    Result r = run(std::string("explain ") + name);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    // Fitted to the width (COLUMNS unset: 100).
    CHECK(r.out == fit_lines(schedule_description_text(registry, name), 100));
    CHECK(r.out.rfind(std::string(name) + ": ", 0) == 0);
  }
  CHECK(run("explain 1f1b").out.find("  parameters: none\n") != std::string::npos);
}

TEST_CASE("explain optimized SCENARIO compares with every baseline at the same budget") {
  Result text = run(std::string("explain optimized ") + kSmall);
  REQUIRE(text.code == 0);
  CHECK(text.err.empty());
  CHECK(text.out.find("formula: optimized by search") != std::string::npos);
  CHECK(text.out.find("memory decisions of optimized") != std::string::npos);
  CHECK(text.out.find("memory budget 4GiB per device") != std::string::npos);
  // Every baseline has a row: the one the scenario lists (gpipe) and the three added ones.
  for (const char* label : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
    CAPTURE(label);
    CHECK_FALSE(text_row(text.out, label).empty());
  }
  // GPipe (8 activations) and ZB-H2 go out of memory at 4 M_B: shown and marked, not dropped.
  CHECK(text_row(text.out, "gpipe").find("YES") != std::string::npos);
  CHECK(text_row(text.out, "zb-h2").find("YES") != std::string::npos);
  CHECK(text_row(text.out, "1f1b").find("YES") == std::string::npos);
  CHECK(text.out.find("zb-h2: out_of_memory: out of memory on device") != std::string::npos);

  Result json = run(std::string("explain optimized ") + kSmall + " --format json");
  REQUIRE(json.code == 0);
  nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["explain_schema_version"] == 1);
  CHECK(j["schedule"] == "optimized");
  CHECK(j["listed"] == true);
  CHECK(j["formula"]["note"].get<std::string>().find("optimized by search") == 0);
  std::set<std::string> names;
  for (const nlohmann::json& r : j["comparison"]) names.insert(r["schedule"].get<std::string>());
  CHECK(names == std::set<std::string>{"optimized", "gpipe", "1f1b", "zb-h1", "zb-h2"});
  CHECK(j["comparison"][0]["role"] == "explained");
  const nlohmann::json* opt = row_of(j, "optimized");
  const nlohmann::json* one = row_of(j, "1f1b");
  REQUIRE(opt != nullptr);
  REQUIRE(one != nullptr);
  CHECK((*row_of(j, "gpipe"))["role"] == "listed");
  CHECK((*one)["role"] == "added");
  // At the same memory, the optimized order's bubble is at most 1F1B's, at both levels.
  const double opt_sim = (*opt)["simulation"]["bubble_ratio_span"];
  const double one_sim = (*one)["simulation"]["bubble_ratio_span"];
  CHECK(opt_sim <= one_sim);
  CHECK((*opt)["table"]["bubble_ratio_span"].get<double>() <=
        (*one)["table"]["bubble_ratio_span"].get<double>());
  CHECK((*one)["bubble_vs_explained"]["simulation"].get<double>() ==
        doctest::Approx(one_sim / opt_sim));
  CHECK((*opt)["bubble_vs_explained"]["simulation"].get<double>() == 1.0);
  // The optimized schedule fits the budget; the out-of-memory baselines are marked.
  CHECK((*opt)["out_of_memory"] == false);
  CHECK((*opt)["simulation"]["peak_memory_bytes"].get<std::int64_t>() <= std::int64_t{4} << 30);
  for (const char* oom : {"gpipe", "zb-h2"}) {
    CAPTURE(oom);
    const nlohmann::json& r = *row_of(j, oom);
    CHECK(r["out_of_memory"] == true);
    CHECK(r["status"] == "out_of_memory");
    CHECK(r["simulation"].is_null());
    CHECK(r["table"]["peak_memory_bytes"].get<std::int64_t>() > std::int64_t{4} << 30);
  }
  // The optimizer decides no offload or recompute here and the scenario has no passes.
  for (const nlohmann::json& d : j["memory_decisions"]["devices"]) {
    CHECK(d["offloaded"] == 0);
    CHECK(d["recomputed"] == 0);
    CHECK(d["peak_memory_bytes"].get<std::int64_t>() <= d["budget_bytes"].get<std::int64_t>());
  }
}

TEST_CASE(
    "explain optimized on the optimizer's base scenario beats 1F1B and marks ZB-H2 out of memory") {
  Result r = run("explain optimized scenarios/optimizer/base.yaml --format json");
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json* opt = row_of(j, "optimized");
  const nlohmann::json* one = row_of(j, "1f1b");
  const nlohmann::json* h2 = row_of(j, "zb-h2");
  REQUIRE(opt != nullptr);
  REQUIRE(one != nullptr);
  REQUIRE(h2 != nullptr);
  REQUIRE(row_of(j, "zb-h1") != nullptr);
  CHECK((*opt)["simulation"]["bubble_ratio_span"].get<double>() <=
        (*one)["simulation"]["bubble_ratio_span"].get<double>());
  CHECK((*h2)["out_of_memory"] == true);
  CHECK((*one)["role"] == "listed");  // base.yaml lists all three baselines
}

TEST_CASE("explain reads offload, reload and recompute decisions from the replayed table") {
  Result a = run(std::string("explain 1f1b ") + kPasses + " --format json");
  REQUIRE(a.code == 0);
  nlohmann::json j = nlohmann::json::parse(a.out);
  const nlohmann::json& devices = j["memory_decisions"]["devices"];
  REQUIRE(devices.size() == 4);
  const std::int64_t gib = std::int64_t{1} << 30, mib = std::int64_t{1} << 20;
  // Stage 0 recomputes every microbatch: M_B - stage input not stored each time.
  CHECK(devices[0]["recomputed"] == 8);
  CHECK(devices[0]["recompute_not_stored_bytes"] == 8 * (gib - 128 * mib));
  CHECK(devices[0]["offloaded"] == 0);
  // Stage 1 offloads what the pass chose; every offload has its reload; the table agrees with the
  // pass's own log.
  const nlohmann::json* offload = nullptr;
  for (const nlohmann::json& p : j["memory_decisions"]["passes"]) {
    if (p["name"] == "offload") offload = &p;
  }
  REQUIRE(offload != nullptr);
  const std::int64_t moved = (*offload)["count_per_device"][1];
  CHECK(moved > 0);
  CHECK(devices[1]["offloaded"] == moved);
  CHECK(devices[1]["reloaded"] == moved);
  CHECK(devices[1]["offloaded_bytes"] == moved * gib);
  CHECK(devices[1]["offloaded_bytes"] == (*offload)["bytes_per_device"][1]);
  CHECK(devices[1]["recomputed"] == 0);
  for (int d : {2, 3}) {
    CHECK(devices[d]["offloaded"] == 0);
    CHECK(devices[d]["recomputed"] == 0);
  }
  // The scenario lists zb-h1 (a listed baseline); zb-h2 is added and out of memory.
  CHECK((*row_of(j, "zb-h1"))["role"] == "listed");
  CHECK((*row_of(j, "zb-h2"))["out_of_memory"] == true);

  Result text = run(std::string("explain 1f1b ") + kPasses);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("scenario's recompute pass (full): 8 of 32 activations on stages [0]") !=
        std::string::npos);
  // Deterministic: no timing-dependent number without a solver in the note.
  CHECK(run(std::string("explain 1f1b ") + kPasses).out == text.out);
  CHECK(run(std::string("explain 1f1b ") + kPasses + " --format json").out == a.out);
}

TEST_CASE("explain shows recompute per unit inside B, and the offload of the checkpoints") {
  Result a = run("explain 1f1b tests/cli/explain_recompute_per_unit.yaml --format json");
  REQUIRE(a.code == 0);
  const nlohmann::json j = nlohmann::json::parse(a.out);
  const nlohmann::json& devices = j["memory_decisions"]["devices"];
  REQUIRE(devices.size() == 4);
  // One layer, per GPU (T = s b = 1024 tokens, h = 1024, f = 4096, 2-byte elements): its input
  // H = T h 2 = 2 MiB, and M_B = 4H (norm and GEMM inputs) + Q, K, V, attention output (4H)
  // + gate, up and product (3 T f 2 = 24 MiB) + the fp32 log-sum-exp (4 x 16 heads x 1024).
  const std::int64_t mib = std::int64_t{1} << 20, H = 2 * mib;
  const std::int64_t layer = 4 * H + 4 * H + 24 * mib + 4 * 16 * 1024;
  for (int d = 0; d < 4; ++d) {
    CAPTURE(d);
    // Every backward of the stage's 8 microbatches recomputes its 2 layers, one at a time.
    CHECK(devices[d]["recomputed"] == 0);  // no R op
    CHECK(devices[d]["recomputed_in_backward"] == 8);
    CHECK(devices[d]["recompute_units"] == 8 * 2);
    CHECK(devices[d]["recompute_unit_bytes"] == layer - H);  // its input is the checkpoint
    CHECK(devices[d]["recompute_not_stored_bytes"] == 8 * 2 * (layer - H));
  }
  // The offload pass moves what F keeps: two checkpoints per activation.
  const std::int64_t offloaded = devices[0]["offloaded"];
  CHECK(offloaded > 0);
  CHECK(devices[0]["offloaded_bytes"] == offloaded * 2 * H);
  const nlohmann::json& passes = j["memory_decisions"]["passes"];
  REQUIRE(passes.size() == 2);
  CHECK(passes[0]["name"] == "recompute");
  CHECK(passes[0]["in_backward"] == true);
  CHECK(passes[0]["units_per_backward"] == 2);
  CHECK(passes[0]["unit_bytes"] == layer - H);
  CHECK(passes[1]["name"] == "offload");

  Result text = run("explain 1f1b tests/cli/explain_recompute_per_unit.yaml");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("recompute (full, per unit inside B): 32 of 32 backwards on stages [0, 1, "
                      "2, 3] redo 2") != std::string::npos);
}

TEST_CASE("explain SCENARIO errors: unknown schedule, bad scenario, json without a scenario") {
  Result bad = run(std::string("explain gpip ") + kSmall);
  CHECK(bad.code == 2);
  CHECK(bad.err.rfind("error: unknown schedule 'gpip'; did you mean 'gpipe'? (known: ", 0) == 0);
  CHECK(bad.out.empty());

  Result scenario = run("explain 1f1b tests/errors/budget_wrong_length.yaml");
  Result same = run("run tests/errors/budget_wrong_length.yaml");
  CHECK(scenario.code == 2);
  CHECK(scenario.err == same.err);
  CHECK(scenario.err.rfind("tests/errors/budget_wrong_length.yaml:", 0) == 0);

  Result missing = run("explain 1f1b tests/cli/no_such_scenario.yaml");
  CHECK(missing.code == 2);

  Result json = run("explain 1f1b --format json");
  CHECK(json.code == 2);
  CHECK(json.err.find("needs a SCENARIO") != std::string::npos);
}

TEST_CASE(
    "explain exits 1 when the explained schedule itself runs out of memory, after reporting") {
  Result r = run(std::string("explain gpipe ") + kSmall);
  CHECK(r.code == 1);
  CHECK(r.out.find("out_of_memory at the simulation level") != std::string::npos);
  CHECK(r.out.find("entry: gpipe (from the scenario's schedules)") != std::string::npos);
  // 1f1b is not listed there: it runs with its defaults.
  Result d = run(std::string("explain 1f1b ") + kSmall);
  CHECK(d.code == 0);
  CHECK(d.out.find("entry: 1f1b (not listed in the scenario: the generator's defaults)") !=
        std::string::npos);
  CHECK_FALSE(
      text_row(d.out, "optimized(time_limit=10s,budget_evals=2000,method=heuristic)").empty());
}

TEST_CASE("explain_schedule skips a default baseline whose generator refuses the scenario") {
  const Registry builtins = builtin_registry();
  Registry registry;
  registry.add(*builtins.find("gpipe"));
  registry.add(*builtins.find("1f1b"));
  registry.add(*builtins.find("zb-h1"));
  Generator refusing = *builtins.find("zb-h2");
  refusing.generate = [](const GeneratorInput&) -> Table {
    throw ScheduleConstraintError("needs more microbatches (test)");
  };
  registry.add(refusing);
  Scenario scenario = load_scenario_file(source(kSmall), builtins);
  scenario.schedules.erase(scenario.schedules.begin());  // keep gpipe only
  ScheduleExplanation e = explain_schedule(scenario, registry, "1f1b");
  REQUIRE(e.rows.size() == 3);  // 1f1b, gpipe (listed), zb-h1 (added)
  CHECK(e.rows[0].run.schedule == "1f1b");
  CHECK(e.rows[0].subject);
  CHECK_FALSE(e.listed);
  CHECK(e.rows[1].run.schedule == "gpipe");
  CHECK(e.rows[1].listed);
  CHECK(e.rows[2].run.schedule == "zb-h1");
  CHECK_FALSE(e.rows[2].listed);
  REQUIRE(e.skipped.size() == 1);
  CHECK(e.skipped[0].schedule == "zb-h2");
  CHECK(e.skipped[0].reason == "zb-h2: needs more microbatches (test)");
  CHECK(e.devices.size() == 4);
  CHECK(bubble_factor(0.2, 0.1).value() == doctest::Approx(2.0));
  CHECK_FALSE(bubble_factor(0.2, 0.0).has_value());
}
