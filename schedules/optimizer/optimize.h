#pragma once
// One optimizer run: the heuristic, then (when asked for and available) the MILP warm-started from
// it; the better order wins, so the MILP is never worse than the heuristic. The MILP does not model
// offload or recompute: when the problem allows them the heuristic decides alone (and says so).

#include <cstdint>
#include <functional>
#include <string>

#include "schedules/optimizer/heuristic.h"
#include "schedules/optimizer/milp.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

enum class Method { Auto, Milp, Heuristic };

struct OptimizeSettings {
  Method method = Method::Auto;
  double time_limit_s = 20;
  std::int64_t max_evaluations = 0;                  // heuristic local search; 0 = derived
  std::function<void(const std::string&)> progress;  // one-line status now and then; may be empty
};

struct OptimizeOutcome {
  bool feasible = false;
  Order order;                   // with R, O and L when the problem allows them
  MemoryPlan plan;               // what was offloaded and recomputed
  std::int64_t cost = 0;         // predicted, under the problem's objective (ps)
  std::int64_t lower_bound = 0;  // certified (ps)
  double gap = 0;                // (cost - best bound) / cost
  std::string method;            // "heuristic" or "milp"
  bool proven_optimal = false;
  HeuristicResult heuristic;
  MilpResult milp;
  bool milp_run = false;
  std::string milp_skipped;  // why the MILP was not run when it was asked for
};

OptimizeOutcome optimize(const Problem& problem, const OptimizeSettings& settings);

/// Auto picks the MILP for at most this many ops per device times devices (p m <= 32).
inline constexpr std::int64_t kAutoMilpMaxCells = 32;

}  // namespace bubblesim::optimizer
