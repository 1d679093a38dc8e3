#pragma once
// One optimizer run: the anytime search (search.h), with the MILP on windows of the order when it
// stalls, then (when asked for, or automatically on small instances that are not yet proven) the
// full MILP warm-started from the search's best (milp.h). The better order wins, so the MILP is
// never worse than the search; the gap is measured against the best bound either has.

#include <cstdint>
#include <functional>
#include <string>

#include "schedules/optimizer/milp.h"
#include "schedules/optimizer/problem.h"
#include "schedules/optimizer/search.h"

namespace bubblesim::optimizer {

enum class Method { Auto, Milp, Heuristic };

/// Search nodes of every device's relaxation in a chain (chain_bound), deterministic.
inline constexpr std::int64_t kChainNodes = 60000000;

struct OptimizeSettings {
  Method method = Method::Auto;
  double time_limit_s = 20;       // wall clock, for users
  std::int64_t budget_evals = 0;  // evaluations; 0: until time_limit (deterministic when set)
  double gap = 0;                 // stop once (cost - bound) / cost <= gap
  std::uint64_t seed = 1;
  std::int64_t chain_nodes = kChainNodes;            // effort of the chain relaxation (0: not run)
  std::function<void(const std::string&)> progress;  // one-line status now and then; may be empty
};

struct OptimizeOutcome {
  bool feasible = false;
  Order order;                   // with R, O and L when the problem allows them
  MemoryPlan plan;               // what was offloaded and recomputed
  std::int64_t cost = 0;         // predicted, under the problem's objective (ps)
  std::int64_t lower_bound = 0;  // certified (ps)
  std::int64_t best_bound = 0;   // max(certified, the full MILP's bound) (ps)
  double gap = 0;                // (cost - best bound) / cost
  std::string method;            // "search", "chain search" (chain_bound) or "milp"
  bool proven_optimal = false;
  SearchResult search;
  MilpResult milp;
  bool milp_run = false;
  std::string milp_skipped;  // why the full MILP was not run when it was asked for
};

OptimizeOutcome optimize(const Problem& problem, const OptimizeSettings& settings);

/// Auto runs the full MILP for at most this many stages times microbatches (p m <= 32).
inline constexpr std::int64_t kAutoMilpMaxCells = 32;
/// Search nodes of the first device's relaxation (first_device_bound.h), deterministic.
inline constexpr std::int64_t kFirstDeviceNodes = 200000;
/// On the time grid, a gap of at most this many steps is closed by yes / no MILPs (is there a
/// schedule of cost <= target?) from the bound upward instead of one MILP that optimizes.
inline constexpr std::int64_t kTargetSteps = 8;

/// "best 12.3 ms, bound 11.9 ms, gap 3.2%" for the progress line.
std::string progress_text(const SearchProgress& p);

}  // namespace bubblesim::optimizer
