#pragma once
// Running a scenario: generate each requested schedule, validate it, replay it idealized and
// simulated. A generator that cannot produce a table within its constraints
// (ScheduleConstraintError) gives the outcome `infeasible` for a schedule the user named, and a
// skipped entry (with its reason) when schedules were defaulted.

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
  /// Named schedules whose generator could not produce a table (status `infeasible`).
  std::vector<InfeasibleSchedule> infeasible;
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

/// Builds the generator input for `request` from the scenario.
GeneratorInput make_generator_input(const Scenario& scenario, const ParamValues& params);

/// Generates and validates one table. Throws InfeasibleScheduleError when the generator cannot
/// produce a table within its constraints, InputError (located at the schedule entry) when it
/// produces an invalid table.
/// `progress` (may be empty) receives the generator's status lines.
Table generate_table(const Scenario& scenario, const Generator& generator,
                     const ScheduleRequest& request,
                     const std::function<void(const std::string&)>& progress = {});

/// Runs every schedule in `scenario.schedules` (or only those named in `only`, if not empty).
ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry,
                         const std::vector<std::string>& only = {},
                         const ScenarioRunHooks& hooks = {});

/// Runs one schedule; `observers` watch the simulation replay (not the idealized one); `progress`
/// (may be empty) receives the generator's status lines.
ScheduleRun run_schedule(const Scenario& scenario, const Generator& generator,
                         const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers = {},
                         const std::function<void(const std::string&)>& progress = {});

/// Per device, the bottleneck bandwidth of the GPU -> host route (d2h) and back (h2d): the
/// topology's route to the nearest host vertex, or `memory.offload.bandwidth` (a private link) for
/// fixed-delay scenarios. Empty when the scenario has neither.
struct OffloadBandwidths {
  std::vector<Bandwidth> d2h, h2d;
};
OffloadBandwidths offload_bandwidths(const Scenario& scenario);

/// PipeOffload's k (docs/memory.md): k = T_offload / T_compute with T_offload = M_B / (D2H
/// bandwidth of the stage's route) and T_compute = T_F + T_B + T_W of that pipeline stage; the
/// largest over stages is reported. The closed form 10 / (3 (6h + s)) * (GPU FLOP/s) / (PCIe
/// bytes/s) needs a transformer (GPU FLOP/s = flops * efficiency; PCIe = the smallest D2H route
/// bandwidth). hidden: k <= 1 (the scenario's k, else the closed form's).
struct OffloadAnalysis {
  std::optional<double> k;
  std::optional<std::int32_t> k_stage;  // the stage giving the largest k
  std::optional<double> k_formula;
  std::optional<bool> hidden;
  std::optional<Bandwidth> bandwidth;  // smallest D2H bandwidth over devices
};
OffloadAnalysis analyze_offload(const Scenario& scenario);

/// Applies the scenario's memory passes (recompute, then offload on the idealized timings of the
/// recomputed table) to `table`; returns the decisions. Throws InputError for a stage list that
/// does not fit the table.
std::vector<PassDecision> apply_memory_passes(const Scenario& scenario, Table& table,
                                              const std::vector<StageCost>& stage_costs);

/// Engine input for replaying `table` under the scenario, idealized (no communication, no
/// budget) or simulated.
EngineInput make_engine_input(const Scenario& scenario, const Table& table,
                              const std::vector<StageCost>& stage_costs, bool idealized);

}  // namespace bubblesim
