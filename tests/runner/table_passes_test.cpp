// The table passes through one runner (sim/runner/table_passes.h): which passes a scenario asks
// for, each one timed and listed, a pass left out by name (`--skip-pass`, an ablation) leaving the
// table as generated, and a name that is no pass refused with the allowed ones.
#include "sim/runner/table_passes.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "scenario_run_support.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

// 1F1B on 4 devices, 4 microbatches; M_B 1 GiB, stage input 0.25 GiB, T_R = T_F; the whole
// stage recomputed in one R op before its backward (the pass inserts it into the table).
const std::string kScenario =
    "name: passes\n"
    "pipeline: {stages: 4, microbatches: 4}\n"
    "costs: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms, activation_memory: 1GiB,\n"
    "        stage_input_memory: 0.25GiB}\n"
    "communication: {delay: 0.1ms}\n"
    "memory: {recompute: {policy: full, granularity: stage}}\n"
    "schedules: [1f1b]\n";

constexpr Bytes kGiB = Bytes(std::int64_t{1} << 30);

std::size_t count_kind(const Table& t, OpKind kind) {
  std::size_t n = 0;
  for (const auto& ops : t.device_ops)
    n += static_cast<std::size_t>(
        std::count_if(ops.begin(), ops.end(), [&](const Op& op) { return op.kind == kind; }));
  return n;
}

}  // namespace

TEST_CASE("table passes: the runner lists them in order, by the names --skip-pass takes") {
  std::vector<std::string> names;
  for (const TablePass& p : table_passes()) names.emplace_back(p.name);
  CHECK(names == std::vector<std::string>{"a2a-pairing", "recompute", "offload"});
}

TEST_CASE("table passes: a pass the scenario asks for runs timed; skipped by name, it does not") {
  Scenario scenario = load_scenario_string(kScenario, "s.yaml", registry());
  const ScenarioRun full = run_scenario(scenario, registry());
  REQUIRE(full.runs.size() == 1);
  const ScheduleRun& r = full.runs.front();
  // Recompute full: one R per (stage, microbatch), 4 x 4, and its decision reported.
  CHECK(count_kind(r.table, OpKind::Recompute) == 16);
  REQUIRE(r.passes.size() == 1);
  CHECK(r.passes.front().kind == PassKind::Recompute);
  REQUIRE(r.effort.passes.size() == 1);
  CHECK(r.effort.passes.front().name == "recompute");
  CHECK(r.effort.passes.front().seconds >= 0.0);
  CHECK(r.effort.skipped_passes.empty());

  scenario.command_line.skip_passes = {"recompute"};
  const ScenarioRun skipped = run_scenario(scenario, registry());
  REQUIRE(skipped.runs.size() == 1);
  const ScheduleRun& s = skipped.runs.front();
  CHECK(count_kind(s.table, OpKind::Recompute) == 0);
  CHECK(s.passes.empty());
  CHECK(s.effort.passes.empty());
  CHECK(s.effort.skipped_passes == std::vector<std::string>{"recompute"});
  // Without recompute every F keeps its whole activation: device 0 of 1F1B holds p = 4 of them
  // at its peak (4 GiB), against 4 stage inputs (1 GiB) and one rebuilt activation (1 GiB) with
  // it.
  CHECK(s.simulation.metrics.memory.peak_activation_per_device[0] == kGiB * 4);
  CHECK(r.simulation.metrics.memory.peak_activation_per_device[0] == kGiB * 2);
  // Nothing else rewrites the table: the skipped run may replay the order stream.
  CHECK(s.streamed_ops > 0);
  CHECK(r.streamed_ops == 0);
}

TEST_CASE("table passes: a name that is no pass is refused with the allowed ones") {
  Scenario scenario = load_scenario_string(kScenario, "s.yaml", registry());
  scenario.command_line.skip_passes = {"recompte"};
  try {
    run_scenario(scenario, registry());
    FAIL("expected an input error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(
              "--skip-pass: 'recompte' is not a pass (allowed: a2a-pairing, recompute, offload)") !=
          std::string::npos);
  }
}
