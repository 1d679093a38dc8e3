#pragma once
// Running a scenario: generate each requested schedule, validate it, replay it idealized and
// simulated. A generator that rejects the pipeline shape is an input error for a schedule the
// user named, and a skipped entry (with its reason) when schedules were defaulted.

#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/observer.h"
#include "tools/runner/schedule_run.h"
#include "tools/scenario/scenario.h"

namespace bubblesim {

struct SkippedSchedule {
  std::string schedule;
  std::string reason;
};

struct ScenarioRun {
  std::vector<ScheduleRun> runs;
  std::vector<SkippedSchedule> skipped;
};

/// Builds the generator input for `request` from the scenario.
GeneratorInput make_generator_input(const Scenario& scenario, const ParamValues& params);

/// Generates and validates one table. Throws InputError (located at the schedule entry) when the
/// generator rejects the input or produces an invalid table.
Table generate_table(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request);

/// Runs every schedule in `scenario.schedules` (or only those named in `only`, if not empty).
ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry, const std::vector<std::string>& only = {});

/// Runs one schedule; `observers` watch the simulation replay (not the idealized one).
ScheduleRun run_schedule(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers = {});

/// Engine input for replaying `table` under the scenario, idealized (no communication, no
/// budget) or simulated.
EngineInput make_engine_input(const Scenario& scenario, const Table& table, const std::vector<StageCost>& stage_costs,
                              bool idealized);

}  // namespace bubblesim
