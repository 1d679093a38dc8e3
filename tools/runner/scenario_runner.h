#pragma once
// Running a scenario: generate each requested schedule, validate it, replay it idealized and
// simulated. A generator that rejects the pipeline shape is an input error for a schedule the
// user named, and a skipped entry (with its reason) when schedules were defaulted.

#include <functional>
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

/// Optional callbacks of run_scenario, for progress display and per-schedule observers.
struct ScenarioRunHooks {
  /// Called before each schedule runs: its position among those that will run, their number.
  std::function<void(std::size_t position, std::size_t total, const ScheduleRequest& request)> on_schedule;
  /// Observers for the simulation replay of the schedule that becomes `result.runs[run_index]`.
  /// When a defaulted schedule is skipped, the next schedule is asked for the same index.
  std::function<std::vector<EngineObserver*>(std::size_t run_index)> observers;
};

/// Builds the generator input for `request` from the scenario.
GeneratorInput make_generator_input(const Scenario& scenario, const ParamValues& params);

/// Generates and validates one table. Throws InputError (located at the schedule entry) when the
/// generator rejects the input or produces an invalid table.
Table generate_table(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request);

/// Runs every schedule in `scenario.schedules` (or only those named in `only`, if not empty).
ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry, const std::vector<std::string>& only = {},
                         const ScenarioRunHooks& hooks = {});

/// Runs one schedule; `observers` watch the simulation replay (not the idealized one).
ScheduleRun run_schedule(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers = {});

/// Engine input for replaying `table` under the scenario, idealized (no communication, no
/// budget) or simulated.
EngineInput make_engine_input(const Scenario& scenario, const Table& table, const std::vector<StageCost>& stage_costs,
                              bool idealized);

}  // namespace bubblesim
