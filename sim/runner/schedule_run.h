#pragma once
// ScheduleRun: one schedule of a scenario, evaluated at the three abstraction levels:
//   formula     the generator's closed form (if it has one),
//   table       the idealized table: scenario costs, zero communication, no memory budget,
//   simulation  the event-driven replay with the scenario's communication and memory.

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/a2a_exposure.h"
#include "schedules/generator.h"
#include "schedules/passes/memory_passes.h"
#include "schedules/table.h"
#include "sim/engine/simulation_result.h"
#include "sim/variability/monte_carlo.h"

namespace bubblesim {

/// Wall seconds from `start` to now (RunEffort's timings).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The wall time of one table pass (table_passes.h), by its name.
struct PassTime {
  std::string name;
  double seconds = 0.0;
};

/// What computing one ScheduleRun took: wall time and engine replays (not results: they vary
/// from run to run and machine to machine).
struct RunEffort {
  double wall_time_s = 0.0;      // generation + every replay
  std::int32_t replays = 0;      // engine replays this run took (scenario_runner.h says how many)
  double generate_s = 0.0;       // generation alone (the optimizer's solve time)
  std::vector<PassTime> passes;  // each table pass that ran, in order
  std::vector<std::string> skipped_passes;  // asked for by the scenario, left out by --skip-pass
};

struct ScheduleRun {
  std::string schedule;  // generator name
  std::string label;     // name plus non-default parameters, e.g. "interleaved-1f1b(chunks=2)"
  ParamValues params;
  Table table;                         // as replayed: after the memory passes
  std::vector<PassDecision> passes;    // what each pass decided (a2a pairing, recompute, offload)
  std::vector<StageCost> stage_costs;  // per table stage
  Formula formula;
  bool has_formula = false;
  SimulationResult ideal;
  SimulationResult simulation;
  /// With `faults:` in the scenario: the simulation replayed without them, for the report's
  /// "effect of the faults" (unset when the scenario has no faults).
  std::optional<SimulationResult> fault_free;
  /// With `variability:` (docs/variability.md): the Monte Carlo samples of the simulation level.
  /// `simulation` is then the median sample's replay (the one the observers watch; `fault_free`
  /// is that sample without the faults), and the reports give the simulation's makespan and
  /// bubble as means over the samples with their spread. `noiseless` is the replay without any
  /// variability, for the slowdown the noise costs.
  std::optional<MonteCarloResult> monte_carlo;
  std::optional<SimulationResult> noiseless;
  RunEffort effort;  // what computing this run took (the report's "run" object)
  /// Non-zero when the schedule was replayed from its order stream (docs/engine.md, "Streamed
  /// replay"): its op count. `table` then holds the shape and placement without ops, and the
  /// replays have no per-op timings.
  std::uint64_t streamed_ops = 0;
  std::uint64_t op_count() const { return streamed_ops > 0 ? streamed_ops : table.op_count(); }
  /// a2a_per_device(table, stage_costs), computed by the first report metric that needs it and
  /// shared by the others (each would build a table index of its own); reset it when changing
  /// the table or the costs.
  mutable std::shared_ptr<const std::vector<A2aTime>> a2a_from_costs;
};

/// A schedule whose generator could not produce a table within its constraints (a
/// ScheduleConstraintError: a shape it does not accept, the optimizer below its memory floor).
/// It is an outcome like out of memory (exit 1), not bad input: the other schedules still run.
struct InfeasibleSchedule {
  std::string schedule;               // generator name
  std::string label;                  // as ScheduleRun::label
  std::string where;                  // "file:line:column" of the schedule entry ("" when unknown)
  std::string reason;                 // the generator's message
  std::vector<ConstraintFact> facts;  // the numbers that decide it
  std::string remedy;                 // what to change in the settings given ("" when none)
  /// One line: "no order fits ... (activation limit 0.3GiB, one activation 3.56GiB); remedy: ...".
  std::string summary() const;
};

/// Thrown for an infeasible schedule where no report collects it (`table`, `validate`); what()
/// is "WHERE: LABEL: infeasible: SUMMARY". `main` exits 1 for it.
class InfeasibleScheduleError : public std::runtime_error {
 public:
  explicit InfeasibleScheduleError(InfeasibleSchedule outcome);
  const InfeasibleSchedule& outcome() const { return outcome_; }

 private:
  InfeasibleSchedule outcome_;
};

}  // namespace bubblesim
