#pragma once
// IterationPlan: what a replay does beyond one pass over the table (docs/iterations.md). A
// training iteration ends, per device, after its last op, its gradient syncs, a pairwise sync
// such as the tied-embedding all-reduce between the first and the last stage, and its optimizer
// step. With a global barrier (Megatron's synchronous step: the gradient-norm all-reduce) every
// device waits for the slowest before its step; without one (the zero-bubble paper's
// post-validation) each device starts its next iteration as soon as its own step is done. The
// engine replays `count` iterations and reports the period of the last one as the iteration time.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/replay_settings.h"
#include "sim/units/time.h"

namespace bubblesim {

/// Two devices that exchange gradients after their last op (tied embeddings): both wait until
/// both have finished, then spend `duration` together.
struct PairSync {
  std::string name;  // "tied-embedding all-reduce"
  std::int32_t first = 0, second = 0;
  Time duration;
};

struct IterationPlan {
  std::int32_t count = 1;  // iterations replayed; the default replays the table once
  IterationBarrier barrier = IterationBarrier::Global;
  std::vector<Time> optimizer_step;  // per device; empty = no step (or GradientSync's own)
  /// Per device, after the step: `iteration.checkpoint`'s write amortised over its interval
  /// (empty = none).
  std::vector<Time> checkpoint;
  Time barrier_duration;  // the global synchronisation itself (Global only)
  std::vector<PairSync> pair_syncs;
};

}  // namespace bubblesim
