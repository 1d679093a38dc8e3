#pragma once
// Lower bounds for plans with offload and recompute, on the problem's time grid: the
// exact optimum of the first device's relaxation, and of every device's relaxation in a chain
// (which also finds a schedule at its bound where one exists), by depth-first searches
// (relaxation_search.h).
//
// Straight placement, device 0 (stage 0): its F's have no input, so (the engine has no voluntary
// wait) an F, W or R starts the moment the op before it ends; only a B may wait, for its input
// or its reload, and a reload starts only where the engine can start one (when the compute op
// listed before it starts, or its offload ends). The relaxation keeps device 0's own rules
// exactly as the time-indexed MILP states them (milp_grid.h: one compute op at a time, the D2H
// copies in F order right after their F, a reload ending before its B, memory per step under the
// device's limit, each kind in microbatch order) and replaces the other devices by the one thing
// they guarantee: B(0, j)'s input is back no earlier than F(0, j) start + the round trip through
// every later stage; any later arrival is allowed, so a B may wait any number of steps. Every
// schedule the timing model (and so the engine) accepts gives device 0 a schedule of the
// relaxation with the same span, so the relaxation's optimum bounds the stage span (and the
// makespan) from below. docs/optimizer.md ("Certified lower bound", bounds 4 and 5) has the
// arguments.

#include <cstdint>
#include <optional>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

/// Device 0's relaxed optimum in ps, or 0 where it does not apply (V placement, the iteration
/// objective, no offload or recompute, no common time step, a reload slower than the B). It tries
/// spans from `from` (ps) upward; each one the search exhausts without a schedule is certified
/// impossible. Stops after `node_limit` search nodes in all (deterministic) and returns the
/// largest span certified so far; `exact` (when given) says whether that is the optimum.
/// At `deadline` (deadline.h) it stops as at the node limit.
std::int64_t first_device_bound(const Problem& problem, std::int64_t from, std::int64_t node_limit,
                                bool* exact = nullptr, Clock::time_point deadline = kNoDeadline);

/// The relaxation of the first `devices` devices together (docs/optimizer.md, bound 5): every
/// schedule of device 0's relaxation, for each one every schedule of device 1 under the times it
/// sets (F(1, j)'s input arrives when F(0, j) ends, B(1, j) ends by B(0, j)'s start, exactly then
/// when B(0, j) waited for it; with the boundary's delays), and so on; each device keeps device
/// 0's rules (its F's wait for their input, its B's for the round trip through the later stages).
/// A target is certified impossible when no chain of schedules meets it.
struct ChainOutcome {
  std::int64_t bound = 0;  // ps; 0 where it does not apply (as first_device_bound)
  bool exact = false;      // `bound` is the relaxation's optimum (not stopped by the node limit)
  /// With every device (devices = p): the first chain at the bound that the timing model replays
  /// within it, listed with its R, O and L (so an optimal schedule), and its plan.
  std::optional<Order> order;
  MemoryPlan plan;
};
ChainOutcome chain_bound(const Problem& problem, std::int32_t devices, std::int64_t from,
                         std::int64_t node_limit, Clock::time_point deadline = kNoDeadline);

}  // namespace bubblesim::optimizer
