#pragma once
// Running a scenario: resolve it once (resolve.h), then per requested schedule generate the table,
// run the table passes (table_passes.h: each validated) and replay it idealized and simulated. A
// generator that cannot produce a table within its constraints (ScheduleConstraintError) gives the
// outcome `infeasible` for a schedule the user named, and a skipped entry (with its reason) for a
// defaulted one.
//
// Replays per schedule: 2 (the idealized table level and the simulation), plus 1 when
// memory.offload is on (the offload pass reads the idealized timings of the table it transforms),
// plus 1 with faults (the fault-free simulation the report compares against). With
// `variability:` (docs/variability.md) the simulation level is a Monte Carlo run instead: its N
// samples on Scenario::threads workers, the median sample again with the observers, and the
// replay without variability: N + 2 replays in place of 1.

#include <functional>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine/observer.h"
#include "sim/runner/resolve.h"
#include "sim/runner/schedule_run.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

struct SkippedSchedule {
  std::string schedule;
  std::string reason;
};

struct ScenarioRun {
  ResolvedScenario resolved;  // what every run below was given
  std::vector<ScheduleRun> runs;
  std::vector<SkippedSchedule> skipped;
  /// Named schedules whose generator could not produce a table (status `infeasible`).
  std::vector<InfeasibleSchedule> infeasible;
  /// Seconds spent before the schedules: loading the scenario (set by the caller that loaded
  /// it) and resolving it (costs, collectives and all-to-alls timed on the idle topology).
  double load_s = 0.0;
  double setup_s = 0.0;
  /// Seconds from the start of run_scenario to its end: setup_s and every schedule's run.
  double wall_time_s = 0.0;
};

/// Optional callbacks of run_scenario, for progress display and per-schedule observers.
struct ScenarioRunHooks {
  /// Called before each schedule runs: its position among those that will run, their number.
  std::function<void(std::size_t position, std::size_t total, const ScheduleRequest& request)>
      on_schedule;
  /// Observers for the simulation replay of the schedule that becomes `result.runs[run_index]`.
  /// When a defaulted schedule is skipped, the next schedule is asked for the same index.
  std::function<std::vector<EngineObserver*>(std::size_t run_index)> observers;
  /// One-line status from a long-running generator (the optimizer), for a terminal display.
  std::function<void(const std::string& status)> on_progress;
};

/// Generates and validates one table. Throws InfeasibleScheduleError when the generator cannot
/// produce a table within its constraints, InputError (located at the schedule entry) when it
/// produces an invalid table, or (located at the budget's key) when a device's static memory
/// exceeds its budget.
/// `progress` (may be empty) receives the generator's status lines.
Table generate_table(const ResolvedScenario& resolved, const Generator& generator,
                     const ScheduleRequest& request,
                     const std::function<void(const std::string&)>& progress = {});

/// What run_schedule does to a generated table before replaying it: the table passes the
/// scenario asks for (table_passes.h: the a2a pairing, recompute and offload, less those
/// `--skip-pass` leaves out), each timed and the table validated after it (the offload pass
/// replays the table idealized once, counted in run.effort). `run` holds the table and its stage
/// costs; its table, passes and pass times are updated in place.
void apply_schedule_passes(const ResolvedScenario& resolved, const Generator& generator,
                           const ScheduleRequest& request, ScheduleRun& run);

/// A schedule's label in the reports: its name plus its non-default parameters,
/// "interleaved-1f1b(chunks=2)" (ScheduleRun::label; known before it runs).
std::string schedule_label(const Generator& generator, const ParamValues& params);

/// Resolves `scenario` and runs every schedule in `scenario.schedules` (or only those named in
/// `only`, if not empty).
ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry,
                         const std::vector<std::string>& only = {},
                         const ScenarioRunHooks& hooks = {});

/// Runs one schedule; `observers` watch the simulation replay (not the idealized one); `progress`
/// (may be empty) receives the generator's status lines.
ScheduleRun run_schedule(const ResolvedScenario& resolved, const Generator& generator,
                         const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers = {},
                         const std::function<void(const std::string&)>& progress = {});

}  // namespace bubblesim
