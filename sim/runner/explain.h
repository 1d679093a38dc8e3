#pragma once
// Explaining one schedule at a scenario (`bubblesim explain NAME SCENARIO`): the schedule runs
// through the normal runner (memory passes, table and simulation levels), then the baselines at
// the same scenario and memory budget: every other schedule the scenario lists, plus 1f1b, zb-h1
// and zb-h2 when not listed (skipped, with the reason, when their generator refuses the shape).
// The memory decisions are read from the replayed table's O / L / R ops, so they cover the
// generator's own decisions and the scenario's memory passes alike, for any schedule, and from
// its backwards' stage costs where they recompute inside themselves.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/registry.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

/// What one device of the explained schedule does with its activations (from the table's ops).
struct DeviceMemoryDecisions {
  std::int64_t offloaded = 0;   // O ops
  std::int64_t reloaded = 0;    // L ops
  std::int64_t recomputed = 0;  // R ops
  Bytes offloaded_bytes;        // sum of the offloaded activations' M_B (device -> host)
  Bytes reloaded_bytes;         // host -> device
  Bytes recompute_saved;        // what F does not store: M_B - stage input per R, not_stored per B
  /// Recompute inside the backward (StageCost::backward_recompute): backwards that recompute,
  /// the checkpointed units they rebuild in all, the largest unit one holds while it runs.
  std::int64_t recomputed_in_backward = 0;
  std::int64_t recompute_units = 0;
  Bytes recompute_unit;
  Bytes peak_activation;        // simulation level
  Bytes peak_memory;            // simulation level: static + activations
  std::optional<Bytes> budget;  // the scenario's budget for this device
};

struct ExplainedSchedule {
  ScheduleRun run;
  bool subject = false;  // the schedule being explained
  bool listed = false;   // in the scenario's `schedules:` (else an added baseline)
};

struct ScheduleExplanation {
  std::string name;                      // the explained generator
  bool listed = false;                   // the scenario lists it (else its defaults were used)
  std::vector<ExplainedSchedule> rows;   // the subject first, then the baselines
  std::vector<SkippedSchedule> skipped;  // baselines whose generator refused the scenario
  std::vector<DeviceMemoryDecisions> devices;  // of the subject
  const ExplainedSchedule& subject() const { return rows.front(); }
};

/// The baselines added when the scenario does not list them.
inline constexpr std::array<std::string_view, 3> kExplainBaselines = {"1f1b", "zb-h1", "zb-h2"};

/// Runs `name` and its baselines on `scenario`. Throws InputError for an unknown name (with a
/// did-you-mean) or when the explained schedule or a listed one does not fit the scenario.
ScheduleExplanation explain_schedule(const Scenario& scenario, const Registry& registry,
                                     const std::string& name);

/// Per device, the O / L / R ops of `run.table` with their bytes, the backwards that recompute
/// inside themselves, and the simulation's peaks.
std::vector<DeviceMemoryDecisions> memory_decisions(const Scenario& scenario,
                                                    const ScheduleRun& run);

/// A ratio of bubbles, `value / reference`; nullopt when the reference is zero (or either is not
/// finite).
std::optional<double> bubble_factor(double value, double reference);

}  // namespace bubblesim
