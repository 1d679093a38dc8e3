#pragma once
// What the verdict says besides the ranking: the idle time split by cause per schedule
// (sim/engine/idle_split.h; docs/outputs.md "Idle time by cause") and the warning that the pipeline
// stages' costs differ by more than 10% (docs/models.md "Stage layout").

#include <optional>
#include <string>

#include "sim/engine/idle_split.h"
#include "sim/report/report_rows.h"
#include "sim/report/verdict.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// The simulation's idle split of `run` (sim/engine/idle_split.h), computed once per run and
/// thread while the reports ask for its parts.
const IdleSplit& idle_split_of(const ScheduleRun& run);

/// An iteration split by cause, in seconds of one iteration: compute and the idle split's parts.
struct IterationParts {
  double compute_s = 0, bubble_s = 0, imbalance_s = 0, p2p_s = 0, collectives_s = 0, a2a_s = 0;
  double exposed_comm_s() const { return p2p_s + collectives_s + a2a_s; }
};

/// `run`'s iteration of `iteration_s` split: each idle part is its share of devices x makespan
/// (every replayed iteration) times the iteration time, compute the rest, so they sum to
/// `iteration_s`. All compute when the run has no split.
IterationParts iteration_parts(const ScheduleRun& run, double iteration_s);

/// Per ranked schedule: its idle time and the five parts, each in % of devices x makespan (the
/// bubble ratio's denominator); no rows when no ranked run has a split.
ReportRows idle_split_rows(const Verdict& verdict);

/// The HTML verdict's idle split: per ranked schedule a bar of the five parts summed over devices
/// and (up to 64 devices) one bar per device, each part in its own shade, over devices x makespan
/// (per device: over the makespan); "" when no ranked run has a split.
std::string idle_split_html(const Verdict& verdict);

/// Stages differing by more than this (largest F + B + W over the stages' mean, minus one) are
/// warned about.
inline constexpr double kStageImbalanceWarning = 0.10;

/// With `model:` deriving the costs: a warning naming the largest stage, how far above the mean
/// it is and the remedy (`model.layers_per_stage: balanced`) when it is more than 10%; none
/// otherwise.
std::optional<std::string> stage_imbalance_warning(const Scenario& scenario,
                                                   const ScenarioRun& result);

}  // namespace bubblesim
