#pragma once
// Offload and recompute decisions for a compute order (PipeOffload, Wan et al., ICML 2025;
// OptPipe): per activation, keep it, offload it to host memory or recompute it, so that the device
// stays within its activation limit at the smallest cost in time.
//
// A plan is materialized into the engine's op lists: O(s, j) right after F(s, j) (the D2H copy
// starts when the F ends), L(s, j) right after the compute op `reload_lead` F/B/W ops before
// B(s, j) (the H2D copy starts no earlier than that op: the prefetch point), R(s, j) right before
// B(s, j). The timing model (timing_model.h) replays the result exactly.

#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/optimizer/problem.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

enum class ActivationChoice : std::uint8_t { Kept, Offloaded, Recomputed };

/// Decisions per activation, indexed stage * m + microbatch.
struct MemoryPlan {
  std::vector<ActivationChoice> choice;
  std::vector<std::int32_t> reload_lead;  // offloaded: >= 1 F/B/W ops of the order before its B

  static MemoryPlan keep_all(const Problem& problem);
  std::int64_t count(ActivationChoice c) const;
  /// Activations not kept (offloaded or recomputed): the search prefers fewer at equal cost.
  std::int64_t decisions() const;
};

/// `compute` (F, B, W only) with the plan's R, O and L inserted; nullopt when a reload lead does
/// not leave the L after its F (a move of the order can do that).
std::optional<Order> materialize(const Problem& problem, const Order& compute,
                                 const MemoryPlan& plan);

struct FittedPlan {
  MemoryPlan plan;
  Order order;        // materialized
  std::int64_t cost;  // under the problem's objective
};

/// Makes `compute` fit the activation limit: replays it, and at every device's first allocation
/// over the limit offloads the resident activation that lives longest and whose copies fit in its
/// idle window (when offload is allowed), else recomputes the resident activation whose backward
/// is latest (when recompute is allowed); reloads that arrive late get an earlier prefetch point;
/// repeated until the order fits. Then drops every decision that is not needed (same cost, still
/// fits). nullopt: no plan found (a device cannot make room; without offload and recompute: the
/// order does not fit as it is).
std::optional<FittedPlan> fit_memory(const Problem& problem, const Order& compute,
                                     TimingModel& model);

/// The reload lead that starts the H2D copy as late as possible while finishing before the B
/// starts in the replay `eval` (at least 1; 0 when no op between the F and the B is early enough).
std::int32_t best_reload_lead(const Problem& problem, const Order& compute, const Evaluation& eval,
                              std::int32_t stage, std::int32_t microbatch);

}  // namespace bubblesim::optimizer
