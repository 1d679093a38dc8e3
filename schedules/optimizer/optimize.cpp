#include "schedules/optimizer/optimize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/first_device_bound.h"
#include "schedules/optimizer/milp_grid.h"
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

/// F, B and W of a materialized order.
Order compute_of(const Order& order) {
  Order out(order.size());
  for (std::size_t d = 0; d < order.size(); ++d)
    for (const Step& st : order[d])
      if (st.kind == StepKind::F || st.kind == StepKind::B || st.kind == StepKind::W)
        out[d].push_back(st);
  return out;
}

/// The MILP on windows of the order (search.h): time-indexed, on the problem's time grid, each
/// call the next window of the best schedule's steps (half-overlapping, about 12 ops per device),
/// a node limit for determinism (the nodes count as evaluations).
class WindowMilp {
 public:
  WindowMilp(const Problem& pr, Clock::time_point deadline) : pr_(pr), deadline_(deadline) {}

  std::optional<std::pair<Order, MemoryPlan>> operator()(const Order& order, const MemoryPlan& plan,
                                                         std::int64_t cost,
                                                         std::int64_t& evaluations) {
    const std::optional<std::int64_t> step = time_grid(pr_, cost);
    if (!step) return std::nullopt;
    const Evaluation ev = evaluate(pr_, order);
    // Width: about 12 of the longest ops of a device.
    std::int64_t longest = 1;
    for (std::int32_t s = 0; s < pr_.stages; ++s)
      for (StepKind k : {StepKind::F, StepKind::B, StepKind::W})
        longest = std::max(longest, pr_.duration(k, s) / *step);
    const std::int64_t width = 12 * longest;
    const std::int64_t steps = ev.makespan / *step;
    if (next_ * width / 2 > steps) next_ = 0;
    const StepWindow window{next_ * width / 2, next_ * width / 2 + width};
    ++next_;
    MilpLimits limits;
    limits.nodes = 100;  // the limit that binds normally: deterministic
    limits.seconds = std::clamp(seconds_left(deadline_) / 8, 0.1, 10.0);
    limits.deadline = deadline_;
    MilpResult r = solve_grid_milp(pr_, order, plan, limits, window);
    evaluations += 50 + r.nodes;
    if (!r.solved || r.cost >= cost) return std::nullopt;
    return std::make_pair(compute_of(r.order), r.plan);
  }

 private:
  const Problem& pr_;
  Clock::time_point deadline_;
  std::int64_t next_ = 0;
};

/// The time-indexed MILP as a sequence of yes / no questions from the certified bound upward: is
/// there a schedule of cost at most `target`? The model of each question is small (every op's
/// window ends at the target's horizon); a "no" raises the bound by a step, the first "yes" is
/// optimal. Stops at the first question left open (time or node limit).
MilpResult milp_by_targets(const Problem& pr, const Order& order, const MemoryPlan& plan,
                           std::int64_t cost, std::int64_t bound, std::int64_t grid,
                           MilpLimits limits, Clock::time_point deadline) {
  MilpResult all;
  all.available = true;
  all.formulation = "time-indexed";
  all.best_bound = static_cast<double>(bound);
  std::int64_t proven = bound;  // no schedule costs less
  std::string asked;
  for (std::int64_t target = bound; target < cost; target += grid) {
    limits.target = target;
    limits.known_bound = proven;
    limits.seconds = seconds_left(deadline);
    limits.deadline = deadline;
    if (limits.seconds <= 0) {
      asked += fmt::format("{}{}: time limit", asked.empty() ? "" : "; ", target / grid);
      break;
    }
    MilpResult r = solve_grid_milp(pr, order, plan, limits);
    all.seconds += r.seconds;
    all.nodes += r.nodes;
    all.binaries = std::max(all.binaries, r.binaries);
    all.rows = std::max(all.rows, r.rows);
    all.best_bound = std::max(all.best_bound, r.best_bound);
    asked += fmt::format("{}{}: {}", asked.empty() ? "" : "; ", target / grid, r.status);
    if (r.solved && r.cost <= target) {
      all.solved = true;
      all.order = std::move(r.order);
      all.plan = std::move(r.plan);
      all.cost = r.cost;
      break;
    }
    if (r.status != "infeasible for the target") break;
    proven = target + grid;
  }
  all.proven_optimal = all.solved && static_cast<double>(all.cost) <= all.best_bound;
  all.status = fmt::format("{} (cost <= target steps? {})",
                           all.proven_optimal ? "optimal" : "not proven", asked);
  return all;
}

/// One run until `deadline` (deadline.h): every phase stops there with what it has.
OptimizeOutcome optimize_until(const Problem& problem, const OptimizeSettings& settings,
                               Clock::time_point deadline) {
  OptimizeOutcome out;
  out.lower_bound = lower_bound(problem);
  out.lower_bound =
      std::max(out.lower_bound,
               first_device_bound(problem, out.lower_bound, kFirstDeviceNodes, nullptr, deadline));
  // Every device's relaxation in a chain (first_device_bound.h): a bound at least as strong, and
  // where a chain at that bound replays within it, an optimal schedule. At most half of the time
  // left, so that the search has the other half.
  const Clock::time_point chain_deadline =
      std::min(deadline, deadline_after(seconds_left(deadline) / 2));
  const ChainOutcome chain = settings.chain_nodes > 0
                                 ? chain_bound(problem, problem.devices, out.lower_bound,
                                               settings.chain_nodes, chain_deadline)
                                 : ChainOutcome{};
  out.lower_bound = std::max(out.lower_bound, chain.bound);
  SearchSettings ss;
  ss.budget_evals = settings.budget_evals;
  ss.deadline = deadline;
  ss.gap = settings.gap;
  ss.seed = settings.seed;
  ss.bound = out.lower_bound;
  if (settings.progress) {
    ss.progress = [&settings](const SearchProgress& p) { settings.progress(progress_text(p)); };
  }
  if (settings.method != Method::Heuristic && milp_available()) {
    auto windows = std::make_shared<WindowMilp>(problem, deadline);
    ss.window = [windows](const Order& order, const MemoryPlan& plan, std::int64_t cost,
                          std::int64_t& evaluations) {
      return (*windows)(order, plan, cost, evaluations);
    };
  }
  out.search = run_search(problem, ss);
  if (!out.search.feasible) return out;
  out.feasible = true;
  out.order = out.search.order;
  out.plan = out.search.plan;
  out.cost = out.search.cost;
  out.method = "search";
  if (chain.order) {
    const std::int64_t cost = TimingModel(problem).cost(*chain.order);
    if (cost < out.cost) {
      out.order = *chain.order;
      out.plan = chain.plan;
      out.cost = cost;
      out.method = "chain search";
    }
  }
  double bound = static_cast<double>(out.lower_bound);
  out.proven_optimal = out.cost <= out.lower_bound;

  const bool small =
      static_cast<std::int64_t>(problem.stages) * problem.microbatches <= kAutoMilpMaxCells;
  const bool want_milp =
      settings.method == Method::Milp || (settings.method == Method::Auto && small);
  const bool reached_gap =
      settings.gap > 0 && out.cost > 0 &&
      static_cast<double>(out.cost) - bound <= settings.gap * static_cast<double>(out.cost);
  const bool on_grid = time_grid(problem, out.cost).has_value();
  if (want_milp && !milp_available()) {
    out.milp_skipped = "this build has no CBC";
  } else if (want_milp && problem.memory_ops_allowed() && !on_grid) {
    out.milp_skipped = fmt::format(
        "the MILP with offload and recompute is time-indexed and needs every duration and delay "
        "on a common time step, at most {} steps over the horizon; the search decided them",
        kMaxGridSteps);
  } else if (want_milp && !out.proven_optimal && !reached_gap && passed(deadline)) {
    out.milp_skipped = "the time limit was reached before it could start";
  } else if (want_milp && !out.proven_optimal && !reached_gap) {
    if (settings.progress) settings.progress("MILP (CBC) running, warm-started from the search");
    MilpLimits limits;
    limits.seconds = seconds_left(deadline);
    limits.deadline = deadline;
    if (settings.budget_evals > 0) limits.nodes = settings.budget_evals;
    limits.known_bound = out.lower_bound;
    const std::int64_t grid = on_grid ? *time_grid(problem, out.cost) : 0;
    // A gap of a few steps: ask the small yes / no questions rather than optimize at once.
    const bool by_targets = on_grid && problem.objective != Objective::Iteration &&
                            out.cost - out.lower_bound <= kTargetSteps * grid;
    out.milp = by_targets ? milp_by_targets(problem, out.order, out.plan, out.cost, out.lower_bound,
                                            grid, limits, deadline)
               : on_grid  ? solve_grid_milp(problem, out.order, out.plan, limits)
                          : solve_milp(problem, out.order, limits);
    out.milp_run = true;
    bound = std::max(bound, out.milp.best_bound);
    if (out.milp.solved && out.milp.cost <= out.cost) {
      out.order = out.milp.order;
      out.plan = on_grid ? out.milp.plan : MemoryPlan::keep_all(problem);
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

}  // namespace

OptimizeOutcome optimize(const Problem& problem, const OptimizeSettings& settings) {
  const Clock::time_point deadline = deadline_after(settings.time_limit_s);
  if (!problem.memory_ops_allowed()) return optimize_until(problem, settings, deadline);
  // Allowing offload or recompute must never give a worse plan than not allowing them (a
  // search that had both to explore returned 30 ms with recompute allowed at p = 4, m = 8, where
  // the plain problem gives 24 ms).
  // The problem itself runs first, with half of the time; unless that proves its plan optimal,
  // the problem without them runs with the same evaluation budget (so, with budget_evals, exactly
  // the run `offload: false, recompute: false` makes) and the rest of the time, and the better
  // plan wins (at equal cost the one with offload and recompute allowed).
  OptimizeOutcome out = optimize_until(
      problem, settings, std::min(deadline, deadline_after(settings.time_limit_s / 2)));
  if (out.feasible && out.proven_optimal) return out;
  Problem plain = problem;
  plain.memory_ops.allow_offload = false;
  plain.memory_ops.allow_recompute = false;
  const OptimizeOutcome without = optimize_until(plain, settings, deadline);
  if (!without.feasible) return out;
  const std::int64_t cost = TimingModel(problem).cost(without.order);
  if (out.feasible && cost >= out.cost) return out;
  // Its order keeps every activation; the bound stays the one certified for the problem itself.
  const double bound =
      out.feasible ? static_cast<double>(out.best_bound) : static_cast<double>(out.lower_bound);
  out.feasible = true;
  out.order = without.order;
  out.plan = MemoryPlan::keep_all(problem);
  out.cost = cost;
  out.method = without.method + " without offload and recompute";
  out.search = without.search;
  out.proven_optimal = static_cast<double>(cost) <= bound;
  out.best_bound = std::min(cost, static_cast<std::int64_t>(bound));
  out.gap = cost > 0
                ? std::max(0.0, (static_cast<double>(cost) - bound) / static_cast<double>(cost))
                : 0.0;
  return out;
}

}  // namespace bubblesim::optimizer
