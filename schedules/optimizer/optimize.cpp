#include "schedules/optimizer/optimize.h"

#include <algorithm>
#include <chrono>

namespace bubblesim::optimizer {

OptimizeOutcome optimize(const Problem& problem, const OptimizeSettings& settings) {
  const auto started = std::chrono::steady_clock::now();
  OptimizeOutcome out;
  out.lower_bound = lower_bound(problem);
  HeuristicSettings hs;
  hs.max_evaluations = settings.max_evaluations;
  hs.progress = settings.progress;
  hs.deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(settings.time_limit_s));
  out.heuristic = run_heuristic(problem, hs);
  if (!out.heuristic.feasible) return out;
  out.feasible = true;
  out.order = out.heuristic.order;
  out.plan = out.heuristic.plan;
  out.cost = out.heuristic.cost;
  out.method = "heuristic";
  out.proven_optimal = out.cost <= out.lower_bound;
  double bound = static_cast<double>(out.lower_bound);

  const bool small =
      static_cast<std::int64_t>(problem.stages) * problem.microbatches <= kAutoMilpMaxCells;
  const bool want_milp =
      settings.method == Method::Milp || (settings.method == Method::Auto && small);
  if (want_milp && problem.memory_ops_allowed()) {
    out.milp_skipped = "the MILP does not model offload or recompute; the heuristic decided them";
  } else if (want_milp && !milp_available()) {
    out.milp_skipped = "this build has no CBC";
  } else if (want_milp && !out.proven_optimal) {
    if (settings.progress) settings.progress("MILP (CBC) running, warm-started from the heuristic");
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out.milp = solve_milp(problem, out.order, std::max(0.5, settings.time_limit_s - used));
    out.milp_run = true;
    bound = std::max(bound, out.milp.best_bound);
    if (out.milp.solved && out.milp.cost <= out.cost) {
      out.order = out.milp.order;
      out.plan = MemoryPlan::keep_all(problem);
      out.cost = out.milp.cost;
      out.method = "milp";
    }
    // CBC's bound is in floating point: allow a picosecond of rounding.
    out.proven_optimal = static_cast<double>(out.cost) <= bound * (1 + 1e-9) + 1;
  }
  if (out.proven_optimal) bound = static_cast<double>(out.cost);
  out.gap =
      out.cost > 0
          ? std::max(0.0, (static_cast<double>(out.cost) - bound) / static_cast<double>(out.cost))
          : 0.0;
  return out;
}

}  // namespace bubblesim::optimizer
