// Imported schedule tables replay like generated ones; export then import of every registered
// generator reproduces the replay exactly; measured profiles feed the costs.
#include <doctest/doctest.h>

#include <string>

#include "schedules/builtin_generators.h"
#include "schedules/chakra_et.h"
#include "schedules/table_csv.h"
#include "schedules/torch_csv.h"
#include "sim/engine/engine.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/cost_profile_csv.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

std::string source(const std::string& rel) { return std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel; }

SimulationResult replay(const ResolvedScenario& r, const Table& t) {
  return simulate(make_engine_input(r, t, r.costs.for_table(t.chunks), Replay::Idealized));
}

}  // namespace

TEST_CASE("both PyTorch golden files import through from-file and replay without deadlock") {
  Registry registry = builtin_registry();
  for (const char* file : {"tests/data/pytorch/dualpipev.yaml", "tests/data/pytorch/zb1p.yaml"}) {
    CAPTURE(file);
    Scenario sc = load_scenario_file(source(file), registry);
    ScenarioRun run = run_scenario(sc, registry);
    REQUIRE(run.runs.size() == 1);
    CHECK(run.runs[0].ideal.status == RunStatus::Ok);
    CHECK(run.runs[0].simulation.status == RunStatus::Ok);
    CHECK(run.runs[0].table.stages == 2 * sc.stages);
  }
}

TEST_CASE("from-file needs the file to agree with the scenario's pipeline") {
  Registry registry = builtin_registry();
  std::string yaml =
      "name: t\npipeline: {stages: 4, microbatches: 8}\ncosts: {forward: 1ms, backward_input: "
      "1ms}\n"
      "schedules: [{name: from-file, params: {path: " +
      source("tests/data/pytorch/dualpipev_4rank_10mb.csv") + "}}]\n";
  Scenario sc = load_scenario_string(yaml, "t.yaml", registry);
  // A file that does not fit the pipeline is an outcome of that schedule: infeasible.
  ScenarioRun run = run_scenario(sc, registry);
  CHECK(run.runs.empty());
  REQUIRE(run.infeasible.size() == 1);
  CHECK(run.infeasible[0].reason.find("has 10 microbatches but pipeline.microbatches is 8") !=
        std::string::npos);
}

TEST_CASE(
    "export then import of every registered generator gives identical replays (CSV, PyTorch, "
    "Chakra)") {
  Registry registry = builtin_registry();
  Scenario sc = load_scenario_string(
      "name: t\npipeline: {stages: 4, microbatches: 8}\n"
      "costs: {forward: 1.5ms, backward_input: 2ms, backward_weight: 1ms, activation_memory: "
      "1GiB}\n",
      "t.yaml", registry);
  const ResolvedScenario resolved = resolve(sc);
  int exported = 0;
  int through_chakra = 0;
  for (const std::string& name : registry.names()) {
    if (name == "from-file") continue;
    CAPTURE(name);
    const Generator* g = registry.find(name);
    ScheduleRequest request;
    request.name = name;
    for (const ParamSpec& spec : g->info.params) {
      if (!spec.optional_default) request.params.set(spec.name, spec.default_value);
    }
    Table table;
    try {
      table = generate_table(resolved, *g, request);
    } catch (const InputError&) {
      continue;  // this shape does not fit the schedule
    }
    SimulationResult original = replay(resolved, table);
    // bubblesim CSV expresses every table.
    Table ours = read_table_csv(write_table_csv(table), "t.csv");
    CHECK(ours.device_ops == table.device_ops);
    SimulationResult from_ours = replay(resolved, ours);
    CHECK(from_ours.timings.size() == original.timings.size());
    for (std::size_t d = 0; d < original.timings.size(); ++d) {
      for (std::size_t i = 0; i < original.timings[d].size(); ++i) {
        CHECK(from_ours.timings[d][i].start == original.timings[d][i].start);
        CHECK(from_ours.timings[d][i].end == original.timings[d][i].end);
      }
    }
    // Chakra execution traces express every table: the same shape, placement and ops back.
    std::vector<ChakraTraceFile> traces;
    for (const std::string& bytes : write_chakra_traces(table))
      traces.push_back({chakra_file_name(static_cast<std::int32_t>(traces.size())), bytes});
    const Table chakra = read_chakra_traces(traces);
    CHECK(chakra.device_ops == table.device_ops);
    CHECK(chakra.placement.device_of_stage == table.placement.device_of_stage);
    CHECK(chakra.placement.replica_of_microbatch == table.placement.replica_of_microbatch);
    CHECK(chakra.chunks == table.chunks);
    CHECK(chakra.stages == table.stages);
    CHECK(chakra.microbatches == table.microbatches);
    SimulationResult from_chakra = replay(resolved, chakra);
    CHECK(from_chakra.metrics.makespan == original.metrics.makespan);
    ++through_chakra;
    // PyTorch's CSV, when the table has no op it cannot express.
    for (TorchDialect dialect : {TorchDialect::Current, TorchDialect::Legacy2024}) {
      std::string text;
      try {
        text = write_torch_csv(table, dialect);
      } catch (const std::invalid_argument&) {
        continue;
      }
      Table theirs = read_torch_csv(text, "t.csv", dialect).table;
      CHECK(theirs.device_ops == table.device_ops);
      // Default settings (dialect: auto) read the exported file back unchanged.
      const TorchCsvImport detected = read_torch_csv(text, "t.csv", std::nullopt);
      CHECK(detected.dialect == dialect);
      CHECK(detected.table.device_ops == table.device_ops);
      SimulationResult from_theirs = replay(resolved, theirs);
      CHECK(from_theirs.metrics.makespan == original.metrics.makespan);
      for (std::size_t d = 0; d < original.timings.size(); ++d) {
        for (std::size_t i = 0; i < original.timings[d].size(); ++i) {
          CHECK(from_theirs.timings[d][i].start == original.timings[d][i].start);
          CHECK(from_theirs.timings[d][i].end == original.timings[d][i].end);
        }
      }
      ++exported;
    }
  }
  CHECK(exported >= 4);         // gpipe and 1f1b at least, in both dialects
  CHECK(through_chakra >= 14);  // every built-in generator but from-file
}

TEST_CASE("a measured profile sets the per-stage costs and explicit keys override it") {
  Registry registry = builtin_registry();
  Scenario sc = load_scenario_file(source("tests/data/profile/profiled.yaml"), registry);
  REQUIRE(sc.costs.profile.stages.size() == 2);
  CHECK(sc.costs.profile.stages[0].forward == Time::from_ps(3'000'000'000));
  CHECK(sc.costs.profile.stages[1].forward == Time::from_ps(4'000'000'000));
  CHECK(sc.costs.profile.stages[1].backward_input == Time::from_ps(6'000'000'000));
  CHECK(sc.costs.profile.stages[0].recompute == sc.costs.profile.stages[0].forward);
  CHECK(sc.costs.profile.stages[1].backward_weight == Time::from_ps(2'500'000'000));  // overridden
  CHECK(sc.costs.profile.stages[1].activation == Bytes(2LL << 30));
  // The replay runs each op for its profiled duration: GPipe's full backward is T_B + T_W.
  ScenarioRun run = run_scenario(sc, registry);
  REQUIRE(run.runs.size() == 1);
  const ScheduleRun& r = run.runs[0];
  for (std::size_t d = 0; d < 2; ++d) {
    for (std::size_t i = 0; i < r.table.device_ops[d].size(); ++i) {
      const Op& op = r.table.device_ops[d][i];
      const StageCost& c = sc.costs.profile.stages[static_cast<std::size_t>(op.stage)];
      Time want = op.kind == OpKind::Forward ? c.forward : c.full_backward();
      CHECK(r.ideal.timings[d][i].end - r.ideal.timings[d][i].start == want);
      CHECK(r.simulation.timings[d][i].end - r.simulation.timings[d][i].start == want);
    }
  }
}

TEST_CASE("profile errors are located in the profile file") {
  auto errors_of = [](const std::string& csv, int stages) {
    try {
      read_cost_profile_csv(csv, "p.csv", stages);
    } catch (const InputError& e) {
      std::string all;
      for (const Diagnostic& d : e.diagnostics()) all += d.render() + "\n";
      return all;
    }
    return std::string();
  };
  std::string errors =
      errors_of("op,stage,duration,bytes\nforward,0,3ms,\nforwrd,1,3ms,\nbackward_input,0,3,\n", 2);
  CHECK(errors.find("p.csv:3:1: error: unknown op 'forwrd'; did you mean 'forward'?") !=
        std::string::npos);
  CHECK(errors.find("p.csv:4:18: error: backward_input of stage 0:") != std::string::npos);
  CHECK(errors.find("forward has no row for stage 1") != std::string::npos);
  CHECK(errors_of("# meta\nop,stage,duration,bytes\nforward,0,1ms,\nbackward_input,0,1ms,\n", 1)
            .empty());
  // A spreadsheet's UTF-8 byte-order mark and CRLF lines read like the plain file; before, the
  // mark made the header unrecognised, with an invisible character in the message.
  const std::string plain = "op,stage,duration,bytes\nforward,0,1ms,\nbackward_input,0,2ms,\n";
  const MeasuredProfile want = read_cost_profile_csv(plain, "p.csv", 1);
  const MeasuredProfile got = read_cost_profile_csv(
      "\xEF\xBB\xBFop,stage,duration,bytes\r\nforward,0,1ms,\r\nbackward_input,0,2ms,\r\n", "p.csv",
      1);
  REQUIRE(got.stages.size() == 1);
  CHECK(got.stages[0].forward == want.stages[0].forward);
  CHECK(got.stages[0].backward_input == want.stages[0].backward_input);
}
