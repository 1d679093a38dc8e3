#pragma once
// The scalable method: seeds from memory-aware list scheduling (every flag combination, at the
// activation limit and at smaller limits), from the handcrafted zero-bubble orders (ZB-H1, ZB-H2)
// and from 1F1B with a split backward, each checked by the exact timing model; the best feasible
// one is improved by local search (move a W, swap two adjacent ops of different kinds) with every
// candidate evaluated by the same model. Anytime: the best order so far is kept; the search stops
// after `max_evaluations` replays (deterministic) or at the deadline, whichever comes first.
//
// Every seed goes through fit_memory (memory_plan.h). When the problem allows offload or
// recompute, seeds are also list-scheduled at larger activation limits (up to unlimited) and
// fit_memory makes them fit the real one; the local search then also moves the plan: keep /
// offload / recompute one activation, reload one op earlier or later. A candidate of equal cost
// with fewer decisions is preferred. Without them every plan keeps everything and fit_memory only
// checks the limit, so the search is over orders alone.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct HeuristicSettings {
  std::int64_t max_evaluations =
      0;  // 0: derived from the problem size (about 2e7 op replays, 50 to 2000
          // replays; with offload / recompute 1e8, 200 to 100000)
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::uint64_t seed = 1;
  /// Called now and then with a one-line status (may be empty).
  std::function<void(const std::string&)> progress;
};

struct HeuristicResult {
  bool feasible = false;  // false: no seed fits the activation limit
  Order order;            // with the plan's R, O and L when the problem allows them
  Order compute_order;    // F, B, W only
  MemoryPlan plan;        // keep everything unless offload / recompute are allowed
  std::int64_t cost = 0;  // under the problem's objective
  std::string seed_name;  // which seed the search started from
  std::int64_t seed_cost = 0;
  std::int64_t evaluations = 0;
  std::int64_t improvements = 0;
};

HeuristicResult run_heuristic(const Problem& problem, const HeuristicSettings& settings);

/// The 1F1B order with split backward (warm-up p-r forwards, then (B, W, F) triples) and the
/// zero-bubble handcrafted orders: warm-up `warmup(r)` forwards, `rounds(r)` (B, F) pairs, then
/// (B, W, F) triples (SCHEDULES.md 4.6-4.7).
Order handcrafted_order(std::int32_t p, std::int32_t m, std::int32_t warmup_extra_factor,
                        std::int32_t rounds_factor);

}  // namespace bubblesim::optimizer
