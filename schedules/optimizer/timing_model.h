#pragma once
// Exact timing and memory of an order under the fixed-delay replay semantics
// (docs/schedule-rules.md 4.8, docs/memory.md): every device runs its compute ops (F, B, W, R) in
// list order, one at a time, and its copies on two engines, O (D2H) and L (H2D), each in list
// order; an op starts at max(its stream free, every dependency's end + delay), the delay being the
// boundary's on the edges F(s-1, j) -> F(s, j) and B(s+1, j) -> B(s, j) (zero where both stages
// share a device) and zero on the edges within a stage (F -> B, B -> W, F -> R -> B, F -> O -> L ->
// B); a copy also starts no earlier than the start of the compute op listed just before it (the
// prefetch point).
//
// Memory per device: the replay's rules (schedules/activation_memory.h, with the problem's
// release convention): under the split release F start +M_B (the stage input when the activation
// is recomputed), R start +M_B, L start +M_B; O end -M_B, B start +(M_W - M_B) when M_W > M_B,
// B end -(M_B - M_W) (and the stage input when recomputed) when M_W <= M_B, W end -M_W. Without
// copies the device runs one op at a time and the memory when an op starts is what the ops
// before it left plus its allocation. With copies the events are
// merged in time, and where a copy event and a compute event fall on the same instant the order
// the engine would use is not fixed, so the model takes the worse one (an L's allocation before,
// an O's release after): a plan it accepts never goes over the limit in the engine.

#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct Evaluation {
  bool complete = false;   // false: the order deadlocks (an op waits for one listed after it)
  bool memory_ok = false;  // every device's peak activation memory within its limit
  std::int64_t makespan = 0;
  std::int64_t span_max = 0;       // largest per-device span (first op start to last op end)
  std::int64_t objective = 0;      // under the problem's objective (problem.h)
  std::vector<std::int64_t> span;  // per device
  std::vector<std::int64_t> first_start, last_end;  // per device (last_end includes its copies)
  std::vector<std::int64_t> peak_bytes;             // per device
  /// Per device: the time of the first allocation that goes over the limit, or -1.
  std::vector<std::int64_t> first_over;
  /// Per activation (problem.index): how long its B waited for its reload beyond every other
  /// dependency and its stream (only when the problem allows offload or recompute).
  std::vector<std::int64_t> reload_wait;
  /// End time of every op: end[kind][stage * m + microbatch]; -1 when it never ran (R, O and L are
  /// only tracked when the problem allows them).
  std::vector<std::int64_t> end[kStepKinds];
  std::int64_t start_of(const Problem& problem, Step st) const {
    return end[static_cast<int>(st.kind)][problem.index(st.stage, st.microbatch)] -
           problem.duration(st.kind, st.stage);
  }
  /// The cost under the problem's objective, or a huge value when the order is infeasible
  /// (deadlock or over memory).
  std::int64_t feasible_cost() const;
};

/// Replays `order` (one list per device) for `problem`. Cost O(number of ops).
Evaluation evaluate(const Problem& problem, const Order& order);

/// What the MILPs minimize for a replay: the objective, or for the iteration objective its
/// stand-in, the first iteration's end (objective_cost), which their rows can express.
std::int64_t milp_objective(const Problem& problem, const Evaluation& evaluation);

/// Reusable evaluator that keeps its buffers between calls (local search calls it many times).
class TimingModel {
 public:
  explicit TimingModel(const Problem& problem);
  /// Cost under the problem's objective, or kInfeasible.
  std::int64_t cost(const Order& order);
  const Evaluation& last() const { return eval_; }
  static constexpr std::int64_t kInfeasible = std::numeric_limits<std::int64_t>::max() / 4;

 private:
  void run(const Order& order);
  /// One iteration's replay with every device free from release_[d] on (spans, ends; no memory).
  void replay(const Order& order);
  /// The iteration objective as the engine measures it with two iterations (docs/iterations.md):
  /// the end of the second minus the end of the first, each device starting the second when its
  /// own first one ended (its step after its last op, after the barrier when there is one).
  std::int64_t iteration_period(const Order& order);
  /// When each device may start the next iteration after the replay in eval_; returns the
  /// iteration's end (every device's step done).
  std::int64_t iteration_end(std::vector<std::int64_t>& next_start) const;
  bool mark_memory_ops(const Order& order);
  bool advance_compute(std::int32_t d, const std::vector<Step>& ops);
  bool advance_copies(std::int32_t d, const std::vector<Step>& ops, int engine);
  void wake_stage(std::int32_t stage);
  /// What one op allocates at its start and frees at its end (the replay's rule, with the R
  /// marks of the order), and when it starts and ends after the replay.
  MemoryStep memory_step(Step st) const;
  std::int64_t start_time(Step st) const;
  std::int64_t end_time(Step st) const;
  /// Records `memory` after an allocation in the device's peak; true when it is the device's
  /// first allocation over the limit.
  bool first_over_limit(std::size_t device, std::int64_t memory);
  void account_memory(const Order& order);
  void account_device_with_copies(std::int32_t d, const std::vector<Step>& ops);

  /// Where each device's streams stand in a replay: list cursors, when each stream is free, the
  /// first compute start, and the devices queued to advance.
  struct Streams {
    std::vector<std::size_t> position;          // compute cursor per device
    std::vector<std::size_t> copy_position[2];  // O and L cursors per device
    std::vector<std::int64_t> copy_free[2];
    std::vector<std::int64_t> free;
    std::vector<std::int64_t> first_start;
    std::vector<std::int32_t> queue;
    std::vector<char> queued;
    bool malformed = false;  // an op the problem does not have, or one listed twice
  };
  /// The R, O and L the order lists, per (stage, microbatch).
  struct MemoryOpMarks {
    std::vector<char> has[kStepKinds];  // R, O, L present
    bool copies = false;                // some O or L listed
  };
  struct MemoryEvent {
    std::int64_t time;
    std::int64_t delta;
  };
  /// One device's memory events per stream (scratch of account_device_with_copies).
  struct MemoryEvents {
    std::vector<MemoryEvent> compute, reload, offload;
  };
  /// The iteration objective's second replay.
  struct NextIteration {
    std::vector<std::int64_t> release;     // per device: when the replayed iteration may start
    std::vector<std::int64_t> next_start;  // per device: when the next iteration may start
    Evaluation first;                      // scratch: the first iteration's replay
  };

  // The list-scheduling kernel's parts for one replay (timing_model.cpp).
  struct Ends;
  struct EndsWithoutReloads;
  struct ComputeRun;

  const Problem& problem_;
  const bool memory_ops_;                  // the problem allows R, O, L
  std::vector<std::size_t> expected_ops_;  // F, B, W per device (3 m per stage it holds)
  Evaluation eval_;
  Streams streams_;
  MemoryOpMarks marks_;
  MemoryEvents events_;
  NextIteration iteration_;
};

}  // namespace bubblesim::optimizer
