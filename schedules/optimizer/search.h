#pragma once
// The anytime search: every seed (seeds.h) is fitted to the limit (fit_memory) and the best one is
// improved by iterated local search. Moves: the small neighbourhood (adjacent swap, W by up to 8
// places), the large one (any op by up to 16 places, an op moved into an idle gap of the replay)
// and, with offload or recompute, plan moves; a candidate is kept when its replayed cost does not
// grow (sideways moves allowed; at equal cost the plan with fewer decisions). When the current
// order has not improved for a while the search restarts: from the best order with a kick of
// random moves, from the next seed, or from a randomized greedy order; every few restarts it hands
// the best order to `window` (the MILP on a window of the order, optimize.cpp). Finished seeds
// (seeds.h: the repaired building blocks) are fitted but never started from: the result is the
// better of the search's best and the best of them. Before that, the search's best gets its
// cool-down rebuilt (cool_down.h) once, kept when better.
//
// It stops at the evaluation budget (deterministic for a given seed), at the deadline, when the
// best cost reaches the certified lower bound, or when the gap to it is at most `gap`.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct SearchProgress {
  std::int64_t best = 0;   // ps; TimingModel::kInfeasible while nothing fits
  std::int64_t bound = 0;  // ps
  std::int64_t evaluations = 0, restarts = 0;
  std::string phase;  // "seeds", "local search", "MILP window"
};

struct SearchSettings {
  std::int64_t budget_evals = 0;             // 0: until the deadline
  Clock::time_point deadline = kNoDeadline;  // deadline.h
  double gap = 0;
  std::uint64_t seed = 1;
  std::int64_t bound = 0;  // certified lower bound: the search stops there
  std::function<void(const SearchProgress&)> progress;
  /// The MILP on a window of `order` (materialized, with its plan): a better compute order (F, B,
  /// W) and plan, or nullopt; adds the evaluations it counts to `evaluations`. May be empty.
  std::function<std::optional<std::pair<Order, MemoryPlan>>(
      const Order& order, const MemoryPlan& plan, std::int64_t cost, std::int64_t& evaluations)>
      window;
};

struct SearchResult {
  bool feasible = false;  // false: no seed fits the activation limit
  Order order;            // with the plan's R, O and L when the problem allows them
  Order compute_order;    // F, B, W only
  MemoryPlan plan;        // keep everything unless offload / recompute are allowed
  std::int64_t cost = 0;  // under the problem's objective
  std::string seed_name;  // which seed the search started from
  std::int64_t seed_cost = 0;
  std::int64_t evaluations = 0;
  std::int64_t improvements = 0;
  std::int64_t restarts = 0;
  std::int64_t windows = 0, windows_improved = 0;
  std::string stopped;  // "budget", "time limit", "lower bound", "gap"
};

SearchResult run_search(const Problem& problem, const SearchSettings& settings);

}  // namespace bubblesim::optimizer
