#include "schedules/optimizer/optimize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

std::string progress_text(const SearchProgress& p) {
  if (p.best >= TimingModel::kInfeasible) {
    return fmt::format("{}: nothing fits yet, {} evaluations", p.phase, p.evaluations);
  }
  const double gap = p.best > 0 ? 100.0 * static_cast<double>(p.best - std::min(p.best, p.bound)) /
                                      static_cast<double>(p.best)
                                : 0.0;
  return fmt::format(
      "{}: best {:.6g} ms, bound {:.6g} ms, gap {:.3g}%, {} evaluations, {} restarts", p.phase,
      static_cast<double>(p.best) * 1e-9, static_cast<double>(p.bound) * 1e-9, gap, p.evaluations,
      p.restarts);
}

namespace {

double seconds_left(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
}

}  // namespace

OptimizeOutcome optimize(const Problem& problem, const OptimizeSettings& settings) {
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(settings.time_limit_s));
  OptimizeOutcome out;
  out.lower_bound = lower_bound(problem);
  SearchSettings ss;
  ss.budget_evals = settings.budget_evals;
  ss.deadline = deadline;
  ss.gap = settings.gap;
  ss.seed = settings.seed;
  ss.bound = out.lower_bound;
  if (settings.progress) {
    ss.progress = [&settings](const SearchProgress& p) { settings.progress(progress_text(p)); };
  }
  out.search = run_search(problem, ss);
  if (!out.search.feasible) return out;
  out.feasible = true;
  out.order = out.search.order;
  out.plan = out.search.plan;
  out.cost = out.search.cost;
  out.method = "search";
  double bound = static_cast<double>(out.lower_bound);
  out.proven_optimal = out.cost <= out.lower_bound;

  const bool small =
      static_cast<std::int64_t>(problem.stages) * problem.microbatches <= kAutoMilpMaxCells;
  const bool want_milp =
      settings.method == Method::Milp || (settings.method == Method::Auto && small);
  const bool reached_gap =
      settings.gap > 0 && out.cost > 0 &&
      static_cast<double>(out.cost) - bound <= settings.gap * static_cast<double>(out.cost);
  if (want_milp && problem.memory_ops_allowed()) {
    out.milp_skipped = "the MILP does not model offload or recompute; the search decided them";
  } else if (want_milp && !milp_available()) {
    out.milp_skipped = "this build has no CBC";
  } else if (want_milp && !out.proven_optimal && !reached_gap) {
    if (settings.progress) settings.progress("MILP (CBC) running, warm-started from the search");
    MilpLimits limits;
    limits.seconds = std::max(0.5, seconds_left(deadline));
    if (settings.budget_evals > 0) limits.nodes = settings.budget_evals;
    out.milp = solve_milp(problem, out.order, limits);
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
  out.best_bound = static_cast<std::int64_t>(std::min(bound, static_cast<double>(out.cost)));
  out.gap =
      out.cost > 0
          ? std::max(0.0, (static_cast<double>(out.cost) - bound) / static_cast<double>(out.cost))
          : 0.0;
  return out;
}

}  // namespace bubblesim::optimizer
