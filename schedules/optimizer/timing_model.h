#pragma once
// Exact timing and memory of an order under the fixed-delay replay semantics (SCHEDULES.md 4.8,
// docs/memory.md): every device runs its ops in order, one at a time; an op starts at
// max(device free, every dependency's end + delay), the delay being comm on the cross-device edges
// F(s-1, j) -> F(s, j) and B(s+1, j) -> B(s, j) and zero on same-device edges (F(p-1, j) -> B(p-1, j),
// F -> B, B -> W of one stage). Memory is counted at op boundaries: since a device runs one op at a
// time, the memory when an F starts is the sum of the deltas of every op before it, which is what
// the engine sees under the `split` release convention.

#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct Evaluation {
  bool complete = false;    // false: the order deadlocks (an op waits for one listed after it)
  bool memory_ok = false;   // every device's peak activation memory within its limit
  std::int64_t makespan = 0;
  std::int64_t span_max = 0;               // largest per-device span (first op start to last op end)
  std::vector<std::int64_t> span;          // per device
  std::vector<std::int64_t> peak_bytes;    // per device
  /// End time of every op: end[kind][stage * m + microbatch]; -1 when it never ran.
  std::vector<std::int64_t> end[kStepKinds];
  std::int64_t cost(Objective o) const { return o == Objective::Makespan ? makespan : span_max; }
  /// The cost, or a huge value when the order is infeasible (deadlock or over memory).
  std::int64_t feasible_cost(Objective o) const;
};

/// Replays `order` (one list per device) for `problem`. Cost O(number of ops).
Evaluation evaluate(const Problem& problem, const Order& order);

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
  const Problem& problem_;
  Evaluation eval_;
  std::vector<std::size_t> position_;
  std::vector<std::int64_t> free_;
  std::vector<std::int64_t> memory_;
  std::vector<std::int32_t> queue_;
  std::vector<char> queued_;
};

}  // namespace bubblesim::optimizer
