#include "schedules/optimizer/heuristic.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "schedules/optimizer/list_scheduler.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

Order handcrafted_order(std::int32_t p, std::int32_t m, std::int32_t warmup_extra_factor,
                        std::int32_t rounds_factor) {
  Order order(static_cast<std::size_t>(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = order[static_cast<std::size_t>(r)];
    std::int32_t f = 0, b = 0, w = 0;
    // warm-up: (p - r) for factor 1, 2(p - r) - 1 for factor 2
    const std::int32_t warmup =
        std::min(m, warmup_extra_factor * (p - r) - (warmup_extra_factor - 1));
    while (f < warmup) ops.push_back({StepKind::F, f++});
    for (std::int32_t k = 0; k < rounds_factor * r && f < m; ++k) {
      ops.push_back({StepKind::B, b++});
      ops.push_back({StepKind::F, f++});
    }
    while (f < m) {
      ops.push_back({StepKind::B, b++});
      ops.push_back({StepKind::W, w++});
      ops.push_back({StepKind::F, f++});
    }
    while (b < m) {
      ops.push_back({StepKind::B, b++});
      ops.push_back({StepKind::W, w++});
    }
    while (w < m) ops.push_back({StepKind::W, w++});
  }
  return order;
}

namespace {

struct Seed {
  std::string name;
  Order order;
};

std::vector<Seed> seeds(const Problem& problem) {
  std::vector<Seed> out;
  const std::int32_t p = problem.stages, m = problem.microbatches;
  out.push_back({"1f1b-split", handcrafted_order(p, m, 1, 0)});
  out.push_back({"zb-h1", handcrafted_order(p, m, 1, 1)});
  out.push_back({"zb-h2", handcrafted_order(p, m, 2, 2)});
  // List scheduling at the limit and at smaller limits (multiples of p M_B below it), so a larger
  // budget never has fewer candidates than a smaller one.
  // With offload or recompute the order may hold more than the limit (fit_memory makes room), so
  // larger limits are tried too, up to unlimited.
  const bool larger = problem.memory_ops_allowed();
  std::set<std::int64_t> fractions_x4;  // limit scale factors in quarters of p M_B
  for (std::int64_t q = 4; q <= 4 * 4; q += 2) fractions_x4.insert(q);
  if (larger) fractions_x4.insert({5, 7, 9, 20, 24, 32});
  std::vector<std::vector<std::int64_t>> limits{problem.limit_bytes};
  for (std::int64_t q : fractions_x4) {
    std::vector<std::int64_t> lim(problem.limit_bytes.size());
    bool smaller = true;
    for (std::size_t s = 0; s < lim.size(); ++s) {
      lim[s] = q * p * problem.activation_bytes[s] / 4;
      if (lim[s] >= problem.limit_bytes[s]) smaller = false;
    }
    if (smaller || larger) limits.push_back(lim);
  }
  if (larger) {
    std::vector<std::int64_t> unlimited(problem.limit_bytes.size());
    for (std::size_t s = 0; s < unlimited.size(); ++s)
      unlimited[s] = m * problem.activation_bytes[s];
    limits.push_back(unlimited);
  }
  const auto flags = all_list_flags();
  for (std::size_t li = 0; li < limits.size(); ++li) {
    Problem limited = problem;
    limited.limit_bytes = limits[li];
    for (std::size_t fi = 0; fi < flags.size(); ++fi) {
      if (auto order = list_schedule(limited, flags[fi])) {
        out.push_back({"list(limit " + std::to_string(li) + ", flags " + std::to_string(fi) + ")",
                       std::move(*order)});
      }
    }
  }
  return out;
}

/// One random change of an order (F, B, W only): swap two adjacent ops of different kinds, or
/// move a W by up to 8 places without crossing another W. False when the draw changed nothing.
bool random_order_move(Order& order, std::mt19937_64& rng) {
  const std::size_t d = std::uniform_int_distribution<std::size_t>(0, order.size() - 1)(rng);
  auto& c = order[d];
  const std::size_t n = c.size();
  if (n < 2) return false;
  const std::size_t i = std::uniform_int_distribution<std::size_t>(0, n - 2)(rng);
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
    if (c[i].kind == c[i + 1].kind) return false;
    std::swap(c[i], c[i + 1]);
    return true;
  }
  std::size_t w = i;
  while (w < n && c[w].kind != StepKind::W) ++w;
  if (w >= n) return false;
  const int delta = std::uniform_int_distribution<int>(-8, 8)(rng);
  if (delta == 0) return false;
  const std::vector<Step> before = c;
  const Step moved = c[w];
  std::size_t target = w;
  for (int k = 0; k < std::abs(delta); ++k) {
    const std::size_t next = delta < 0 ? target - 1 : target + 1;
    if ((delta < 0 && target == 0) || next >= n || c[next].kind == StepKind::W) {
      c = before;
      return false;
    }
    c[target] = c[next];
    target = next;
  }
  c[target] = moved;
  return true;
}

/// One random change of a plan: an activation kept -> offloaded (reload as late as the last replay
/// allows) or recomputed, offloaded or recomputed -> kept, or a reload one op earlier or later.
bool random_plan_move(const Problem& problem, const Order& compute, const Evaluation& eval,
                      MemoryPlan& plan, std::mt19937_64& rng) {
  const std::size_t i = std::uniform_int_distribution<std::size_t>(0, plan.choice.size() - 1)(rng);
  const auto stage = static_cast<std::int32_t>(i / static_cast<std::size_t>(problem.microbatches));
  const auto microbatch =
      static_cast<std::int32_t>(i % static_cast<std::size_t>(problem.microbatches));
  const int draw = std::uniform_int_distribution<int>(0, 3)(rng);
  switch (plan.choice[i]) {
    case ActivationChoice::Kept:
      if (problem.allow_offload && (draw < 2 || !problem.allow_recompute)) {
        const std::int32_t lead = best_reload_lead(problem, compute, eval, stage, microbatch);
        if (lead < 1) return false;
        plan.choice[i] = ActivationChoice::Offloaded;
        plan.reload_lead[i] = lead;
        return true;
      }
      if (!problem.allow_recompute) return false;
      plan.choice[i] = ActivationChoice::Recomputed;
      return true;
    case ActivationChoice::Offloaded:
      if (draw == 0) {
        plan.choice[i] = ActivationChoice::Kept;
        plan.reload_lead[i] = 0;
        return true;
      }
      if (draw == 1 && plan.reload_lead[i] <= 1) return false;
      plan.reload_lead[i] += draw == 1 ? -1 : 1;
      return true;
    case ActivationChoice::Recomputed:
      plan.choice[i] = ActivationChoice::Kept;
      return true;
  }
  return false;
}

/// Local-search replays: about 2e7 op replays (50 to 2000) for the order alone; the search with a
/// plan has a larger space (every activation's choice and reload point) and gets about 1e8 (200 to
/// 100000), a second or so for p = 8, m = 24.
std::int64_t derived_budget(const Problem& problem, const HeuristicSettings& settings) {
  if (settings.max_evaluations > 0) return settings.max_evaluations;
  const std::size_t ops =
      3 * static_cast<std::size_t>(problem.stages) * static_cast<std::size_t>(problem.microbatches);
  if (problem.memory_ops_allowed()) {
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(100'000'000 / ops), 200, 100'000);
  }
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(20'000'000 / ops), 50, 2'000);
}

bool past(const HeuristicSettings& settings) {
  return std::chrono::steady_clock::now() >= settings.deadline;
}

void report(const HeuristicSettings& settings, const std::string& phase, std::int64_t done,
            std::int64_t total, std::int64_t best) {
  if (!settings.progress) return;
  if (best >= TimingModel::kInfeasible) {
    settings.progress(fmt::format("{} {}/{}, nothing fits yet", phase, done, total));
  } else {
    settings.progress(fmt::format("{} {}/{}, best {:.6g} ms", phase, done, total,
                                  static_cast<double>(best) * 1e-9));
  }
}

}  // namespace

HeuristicResult run_heuristic(const Problem& problem, const HeuristicSettings& settings) {
  // Without offload or recompute every plan keeps everything: the state is the order alone, no
  // plan move is drawn and the materialized order is the order itself.
  const bool plans = problem.memory_ops_allowed();
  HeuristicResult result;
  result.plan = MemoryPlan::keep_all(problem);
  TimingModel model(problem);
  std::int64_t best = TimingModel::kInfeasible;
  std::vector<Seed> all = seeds(problem);
  const auto seed_count = static_cast<std::int64_t>(all.size());
  for (std::int64_t k = 0; k < seed_count; ++k) {
    Seed& seed = all[static_cast<std::size_t>(k)];
    if (k > 0 && past(settings)) break;
    if ((k & 7) == 0) report(settings, "seeds", k, seed_count, best);
    std::optional<FittedPlan> fitted = fit_memory(problem, seed.order, model);
    ++result.evaluations;
    if (!fitted || fitted->cost >= TimingModel::kInfeasible) continue;
    if (fitted->cost < best ||
        (fitted->cost == best && fitted->plan.decisions() < result.plan.decisions())) {
      best = fitted->cost;
      result.order = std::move(fitted->order);
      result.compute_order = std::move(seed.order);
      result.plan = std::move(fitted->plan);
      result.seed_name = seed.name;
    }
  }
  if (best >= TimingModel::kInfeasible) return result;
  result.feasible = true;
  result.seed_cost = best;

  const std::int64_t lb = lower_bound(problem);
  const std::int64_t budget = derived_budget(problem, settings);
  std::mt19937_64 rng(settings.seed);
  Order compute = result.compute_order;
  MemoryPlan plan = result.plan;
  std::int64_t current_cost = best;
  std::int64_t current_decisions = plan.decisions();
  Evaluation
      current_eval;  // the replay of the current state, where plan moves look for reload points
  if (plans) {
    model.cost(result.order);
    current_eval = model.last();
  }
  for (std::int64_t it = 0; it < budget && (best > lb || current_decisions > 0); ++it) {
    if ((it & 63) == 0 && past(settings)) break;
    if ((it & 255) == 0) report(settings, "local search", it, budget, best);
    const bool plan_move = plans && std::uniform_int_distribution<int>(0, 1)(rng) != 0;
    Order candidate_compute;
    MemoryPlan candidate_plan;
    std::optional<Order> materialized;
    if (plan_move) {
      candidate_plan = plan;
      if (!random_plan_move(problem, compute, current_eval, candidate_plan, rng)) continue;
      materialized = materialize(problem, compute, candidate_plan);
    } else {
      candidate_compute = compute;
      if (!random_order_move(candidate_compute, rng)) continue;
      if (plans) materialized = materialize(problem, candidate_compute, plan);
    }
    if (plans && !materialized) continue;  // a reload would come before its forward
    const Order& candidate = plans ? *materialized : candidate_compute;
    const std::int64_t cost = model.cost(candidate);
    ++result.evaluations;
    const std::int64_t n = plan_move ? candidate_plan.decisions() : current_decisions;
    if (cost > current_cost || (cost == current_cost && n > current_decisions)) continue;
    if (cost < best || (cost == best && n < result.plan.decisions())) {
      best = cost;
      result.order = candidate;
      result.compute_order = plan_move ? compute : candidate_compute;
      result.plan = plan_move ? candidate_plan : plan;
      ++result.improvements;
    }
    if (plan_move) {
      plan = std::move(candidate_plan);
    } else {
      compute = std::move(candidate_compute);
    }
    current_cost = cost;
    current_decisions = n;
    if (plans) current_eval = model.last();
  }
  result.cost = best;
  return result;
}

}  // namespace bubblesim::optimizer
