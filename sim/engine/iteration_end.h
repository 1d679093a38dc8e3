#pragma once
// IterationEnd: what happens between two iterations of a replay (iteration_plan.h), computed
// from when each device is ready after the table's ops (and its gradient syncs): pairwise syncs
// (tied embeddings), the global barrier when there is one, and the optimizer step. Reports each
// of them to the observers as a CollectiveEvent, so traces show them on the device's sync track.

#include <cstdint>
#include <vector>

#include "sim/engine/iteration_plan.h"
#include "sim/engine/metrics.h"
#include "sim/engine/observer.h"
#include "sim/units/time.h"

namespace bubblesim {

struct IterationBoundary {
  std::vector<Time> next_start;  // per device: when its next iteration may begin
  Time completion;               // the last device's step has ended
};

/// `ready[d]`: device d has run its last op and its gradient syncs; `step[d]` its optimizer step
/// (may be empty). `iteration` numbers the events ("optimizer step (iteration 2)" from 1 on).
IterationBoundary end_iteration(const IterationPlan& plan, const std::vector<Time>& ready,
                                const std::vector<Time>& step, std::int32_t iteration,
                                const std::vector<EngineObserver*>& observers);

/// Fills `m.iteration` from each replayed (or shifted) iteration's completion time: the count,
/// the replays run, and the iteration time (the last iteration's period; the first iteration's
/// completion when there is only one).
void record_iterations(const std::vector<Time>& completions, std::int32_t replays, Metrics& m);

}  // namespace bubblesim
