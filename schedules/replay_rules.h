#pragma once
// The replay's timing and memory rules, in one place for every replay that computes them without
// the event loop: the list replay's two loops (sim/engine/list_replay.cpp, list_replay_plain.cpp),
// the streamed replay (sim/engine/stream_replay.cpp) and the optimizer's timing model
// (schedules/optimizer/timing_model.cpp). The event loop (sim/engine/event_loop.cpp) reaches the
// same numbers by events; tests/engine/replay_differential_test.cpp replays thousands of random
// cases through every path that covers them and requires them to agree exactly.
//
// Times are integer picoseconds and memory integer bytes (what the list replays and the timing
// model work in). Which producers an op waits for, and the loop that applies these rules op by
// op, is the list-scheduling kernel, schedules/list_scheduling.h.

#include <algorithm>
#include <cstdint>

namespace bubblesim::replay_rules {

/// When data produced at `end` arrives: after the boundary's delay (0 when producer and consumer
/// share a device, or when the replay has no communication cost).
constexpr std::int64_t arrival(std::int64_t end, std::int64_t delay) { return end + delay; }

/// An op starts when its stream is free and its last input has arrived.
constexpr std::int64_t op_start(std::int64_t stream_free, std::int64_t inputs_arrived) {
  return std::max(stream_free, inputs_arrived);
}

/// The part of an op's wait that is exposed communication: from the moment its stream was free
/// and its producers had ended (`producers_ended`: arrivals without communication) to its start.
constexpr std::int64_t exposed_wait(std::int64_t start, std::int64_t producers_ended,
                                    std::int64_t stream_free) {
  return start - std::max(producers_ended, stream_free);
}

/// A backward's duration: only its input half when a W follows it (split), else both halves.
constexpr std::int64_t backward_duration(std::int64_t input, std::int64_t weight, bool split) {
  return split ? input : input + weight;
}

/// Activation memory of a kept activation under the split release convention (the zero-bubble
/// model): F allocates M_B at its start; a split B frees M_B - M_W at its end (nothing when
/// M_W >= M_B: it allocates M_W - M_B at its start instead) and its W frees the rest; an unsplit
/// B frees M_B.
constexpr std::int64_t forward_allocates(std::int64_t activation) { return activation; }
constexpr std::int64_t split_backward_allocates(std::int64_t activation, std::int64_t weight_grad) {
  return weight_grad > activation ? weight_grad - activation : 0;
}
constexpr std::int64_t split_backward_frees(std::int64_t activation, std::int64_t weight_grad) {
  return activation - std::min(weight_grad, activation);
}
constexpr std::int64_t weight_frees(std::int64_t activation, std::int64_t weight_grad) {
  return activation + split_backward_allocates(activation, weight_grad) -
         split_backward_frees(activation, weight_grad);
}

}  // namespace bubblesim::replay_rules
