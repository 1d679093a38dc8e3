#pragma once
// The idle time of one replay split by cause, per device (docs/outputs.md "Idle time by cause").
// Over the simulated makespan T, device d is computing for busy_d minus the all-to-all its ops
// wait on inside them; the rest of T is its idle time, split in this order, each part capped by
// what is left so that the parts are never negative and sum to the idle time exactly:
//   all_to_all   the expert all-to-all left exposed inside d's ops (A2aMetrics, or the stage
//                costs' exposure when the replay did not run it as flows: a2a_exposure.h)
//   p2p          compute idle while the data of a point-to-point transfer was in flight, blocking
//                sends (CommMetrics, per device) and what behaviours count as such, the host gaps
//                of p2p calls (ComponentKind::p2p_idle)
//   collectives  from d's last compute op to the end of its gradient sync, optimizer step and
//                parameter all-gather (SyncMetrics::optimizer_end_per_device; zero without sync)
//   imbalance    waiting because another device has more work: max over devices of busy minus
//                busy_d (the busiest device has none)
//   bubble       the rest: the schedule's own warm-up, cool-down and dependency waits (and
//                waits for offload reloads)

#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

struct IdleSplit {
  /// Per device; idle[d] = makespan - busy[d] + all_to_all[d] = the sum of the five parts.
  std::vector<Time> bubble, imbalance, p2p, collectives, all_to_all, idle;
  /// The sum over devices of one part, in device-seconds (a double: 65,536 devices idle for
  /// minutes each pass the 106 days a Time holds).
  static double total_seconds(const std::vector<Time>& part);
};

/// The split of a finished replay of `table` with `stage_costs` per table stage: its metrics and
/// per-op timings (a streamed replay has none, and no gradient sync: its collectives part is
/// zero). Empty vectors when the metrics have no device.
IdleSplit idle_split(const Table& table, const std::vector<StageCost>& stage_costs,
                     const SimulationResult& result);

}  // namespace bubblesim
