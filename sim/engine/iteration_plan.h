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

#include "sim/units/time.h"

namespace bubblesim {

enum class IterationBarrier : std::uint8_t {
  Global,  // every device waits for the slowest (plus the barrier's own time) before its step
  None,    // each device steps and starts its next iteration on its own
};

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
  Time barrier_duration;             // the global synchronisation itself (Global only)
  std::vector<PairSync> pair_syncs;

  /// Whether anything happens after the table's last op.
  bool has_post_work() const {
    if (barrier_duration > Time::zero() || !pair_syncs.empty()) return true;
    for (Time t : optimizer_step)
      if (t > Time::zero()) return true;
    return false;
  }
};

/// How a cross-device send occupies its sender (communication.p2p).
enum class P2pMode : std::uint8_t {
  Async,     // the sender's compute stream goes on at once; the receiver waits for the data
  Blocking,  // the sender's compute stream is held until its sends have arrived (Megatron's
             // batched send/receive waits for completion); the receiver waits for the data
};

}  // namespace bubblesim
