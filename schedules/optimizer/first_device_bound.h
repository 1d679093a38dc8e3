#pragma once
// A lower bound for plans with offload and recompute (issue 19): the exact optimum of the first
// device's relaxation, found by a depth-first search on the problem's time grid.
//
// Straight placement, device 0 (stage 0): its F's have no input, so (the engine has no voluntary
// wait) an F, W or R starts the moment the op before it ends; only a B may wait, for its input
// or its reload. The relaxation keeps device 0's own rules exactly as the time-indexed MILP
// states them (milp_grid.h: one compute op at a time, the D2H copies in F order right after their
// F, a reload ending before its B, memory per step under the device's limit, each kind in
// microbatch order) and replaces the other devices by the one thing they guarantee: B(0, j)'s
// input is back no earlier than F(0, j) start + the round trip through every later stage; any
// later arrival is allowed, so a B may wait any number of steps. Every schedule the MILP (and so
// the timing model and the engine) accepts gives device 0 a schedule of the relaxation with the
// same span, so the relaxation's optimum bounds the stage span (and the makespan) from below.
// docs/optimizer.md ("Certified lower bound", bound 4) has the argument.

#include <cstdint>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

/// Device 0's relaxed optimum in ps, or 0 where it does not apply (V placement, the iteration
/// objective, no offload or recompute, no common time step, a reload slower than the B). It tries
/// spans from `from` (ps) upward; each one the search exhausts without a schedule is certified
/// impossible. Stops after `node_limit` search nodes in all (deterministic) and returns the
/// largest span certified so far; `exact` (when given) says whether that is the optimum.
std::int64_t first_device_bound(const Problem& problem, std::int64_t from, std::int64_t node_limit,
                                bool* exact = nullptr);

}  // namespace bubblesim::optimizer
