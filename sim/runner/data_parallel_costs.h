#pragma once
// The resolve step's data-parallel part (docs/parallelism.md, "Data-parallel engines"): from the
// engine's semantics (ParallelismSpec::data_parallel) to what the replay runs per stage — the
// gradient bytes of the end-of-step collective in the engine's reduce dtype and whether it runs,
// the parameter all-gather after the step (and how much of it the next forward hides), and the
// per-microbatch collectives of ZeRO 2/3 for the collectives table.

#include <cstdint>

#include "sim/engine/collectives.h"
#include "sim/runner/resolve.h"

namespace bubblesim {

/// Collectives on a stage's data-parallel groups (resolve_costs.cpp times them on the topology).
class DataParallelTimer {
 public:
  virtual ~DataParallelTimer() = default;
  /// A collective of `bytes` over stage `stage`'s first shard group (dp x cp / replicate GPUs).
  virtual CollectiveTiming shard_group(std::int32_t stage, CollectiveKind kind,
                                       double bytes) const = 0;
  /// The routed experts' updated parameters all-gathered over their group (docs/moe.md).
  virtual Time expert_parameter_gather(std::int32_t stage, double bytes) const = 0;
};

/// Fills resolved.sync's gradient bytes, end-of-step collective and parameter all-gathers, and
/// appends the per-microbatch ZeRO collectives to its summaries. `timer` null: nothing is timed.
void resolve_data_parallel(const Scenario& scenario, ResolvedScenario& resolved,
                           const DataParallelTimer* timer);

}  // namespace bubblesim
