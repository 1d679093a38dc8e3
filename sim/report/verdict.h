#pragma once
// The verdict that opens every run and compare report: the schedules that ran without failing,
// fastest first by `simulation.iteration_time_s` when the metric table has it, else
// `simulation.makespan_s`, with their speed-up against a baseline; then the schedules that failed
// (out of memory, deadlock, infeasible) or were skipped, each with a one-line reason.

#include <optional>
#include <string>
#include <vector>

#include "sim/report/metric_table.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

struct RankedSchedule {
  const ScheduleRun* run = nullptr;
  std::size_t rank = 0;                       // 1 = fastest; equal times share a rank
  double time_s = 0.0;                        // the ranking metric
  std::optional<double> speedup_vs_baseline;  // baseline time / this time (> 1: faster)
  std::optional<double> sd_s;                 // with variability: the time's standard deviation
  std::optional<double> p95_s;                //   and 95th percentile over the samples
};

struct FailedSchedule {
  std::string label;
  std::string status;  // out_of_memory, deadlock, infeasible, skipped
  std::string reason;  // one line
};

struct Verdict {
  const Metric* by = nullptr;  // the ranking metric
  std::string baseline;        // label of the baseline run; "" when there is none
  std::string baseline_note;   // why there is no speed-up ("" when there is one)
  std::vector<RankedSchedule> ranked;
  std::vector<FailedSchedule> failed;
  /// Settings that work against a schedule that ran, one line each (a2a_overlap_notes()).
  std::vector<std::string> notes;
  /// What the user should know before trusting the ranking: stages that differ by more than 10%
  /// (idle_split_report.h), with the remedy.
  std::vector<std::string> warnings;
};

/// `parallelism.a2a_overlap` on a pipeline with one chunk per device and more than one device
/// (plain 1F1B, GPipe, ZB-H1): each F&B pair waits on its neighbours' pairs, so the all-to-all
/// it hides is paid back in stalls and the schedule is usually slower with it (docs/moe.md;
/// Megatron overlaps only with interleaving or without pipelining). One line per such run that
/// made pairs.
std::vector<std::string> a2a_overlap_notes(const Scenario& scenario, const ScenarioRun& result);

/// `baseline`: a schedule label or name of the scenario, or "" for the default: 1f1b when it ran.
/// Throws InputError when a `baseline` given names no schedule of the run.
Verdict make_verdict(const Scenario& scenario, const ScenarioRun& result,
                     const std::string& baseline = "");

/// The metric schedules are ranked by: simulation.iteration_time_s if the table has it, else
/// simulation.makespan_s.
const Metric& ranking_metric();

/// The largest fraction of its device's memory budget a run's peak reached, or none without a
/// budget.
std::optional<double> peak_memory_fraction(const Scenario& scenario, const ScheduleRun& run);

/// One line for a failed schedule: "out of memory on device 0 at 130.07 ms during F0.18: 3.39 GiB
/// over the 80 GiB budget".
std::string failure_line(const ScheduleRun& run);

}  // namespace bubblesim
