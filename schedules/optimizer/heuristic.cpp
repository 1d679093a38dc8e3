#include "schedules/optimizer/heuristic.h"

#include <algorithm>
#include <random>
#include <set>

#include "schedules/optimizer/list_scheduler.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

Order handcrafted_order(std::int32_t p, std::int32_t m, std::int32_t warmup_extra_factor, std::int32_t rounds_factor) {
  Order order(static_cast<std::size_t>(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = order[static_cast<std::size_t>(r)];
    std::int32_t f = 0, b = 0, w = 0;
    // warm-up: (p - r) for factor 1, 2(p - r) - 1 for factor 2
    const std::int32_t warmup = std::min(m, warmup_extra_factor * (p - r) - (warmup_extra_factor - 1));
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
  std::set<std::int64_t> fractions_x4;  // limit scale factors in quarters of p M_B
  for (std::int64_t q = 4; q <= 4 * 4; q += 2) fractions_x4.insert(q);
  std::vector<std::vector<std::int64_t>> limits{problem.limit_bytes};
  for (std::int64_t q : fractions_x4) {
    std::vector<std::int64_t> lim(problem.limit_bytes.size());
    bool smaller = true;
    for (std::size_t s = 0; s < lim.size(); ++s) {
      lim[s] = q * p * problem.activation_bytes[s] / 4;
      if (lim[s] >= problem.limit_bytes[s]) smaller = false;
    }
    if (smaller) limits.push_back(lim);
  }
  const auto flags = all_list_flags();
  for (std::size_t li = 0; li < limits.size(); ++li) {
    Problem limited = problem;
    limited.limit_bytes = limits[li];
    for (std::size_t fi = 0; fi < flags.size(); ++fi) {
      if (auto order = list_schedule(limited, flags[fi])) {
        out.push_back({"list(limit " + std::to_string(li) + ", flags " + std::to_string(fi) + ")", std::move(*order)});
      }
    }
  }
  return out;
}

}  // namespace

HeuristicResult run_heuristic(const Problem& problem, const HeuristicSettings& settings) {
  HeuristicResult result;
  TimingModel model(problem);
  std::int64_t best = TimingModel::kInfeasible;
  for (Seed& seed : seeds(problem)) {
    const std::int64_t c = model.cost(seed.order);
    ++result.evaluations;
    if (c < best) {
      best = c;
      result.order = std::move(seed.order);
      result.seed_name = seed.name;
    }
  }
  if (best >= TimingModel::kInfeasible) return result;
  result.feasible = true;
  result.seed_cost = best;

  const std::int64_t lb = lower_bound(problem);
  const std::size_t ops = 3 * static_cast<std::size_t>(problem.stages) * static_cast<std::size_t>(problem.microbatches);
  std::int64_t budget = settings.max_evaluations;
  if (budget <= 0) budget = std::clamp<std::int64_t>(static_cast<std::int64_t>(20'000'000 / ops), 50, 2'000);

  std::mt19937_64 rng(settings.seed);
  Order current = result.order;
  std::int64_t current_cost = best;
  const auto p = static_cast<std::size_t>(problem.stages);
  for (std::int64_t it = 0; it < budget && best > lb; ++it) {
    if ((it & 63) == 0 && std::chrono::steady_clock::now() >= settings.deadline) break;
    const std::size_t d = std::uniform_int_distribution<std::size_t>(0, p - 1)(rng);
    auto& ops_d = current[d];
    const std::size_t n = ops_d.size();
    const std::size_t i = std::uniform_int_distribution<std::size_t>(0, n - 2)(rng);
    Order candidate = current;
    auto& c = candidate[d];
    if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
      // Swap two adjacent ops of different kinds.
      if (c[i].kind == c[i + 1].kind) continue;
      std::swap(c[i], c[i + 1]);
    } else {
      // Move a W by up to 8 places, not across another W (W's stay in microbatch order).
      std::size_t w = i;
      while (w < n && c[w].kind != StepKind::W) ++w;
      if (w >= n) continue;
      const int delta = std::uniform_int_distribution<int>(-8, 8)(rng);
      if (delta == 0) continue;
      const Step moved = c[w];
      std::size_t target = w;
      bool ok = true;
      for (int k = 0; k < std::abs(delta); ++k) {
        const std::size_t next = delta < 0 ? target - 1 : target + 1;
        if ((delta < 0 && target == 0) || next >= n || c[next].kind == StepKind::W) {
          ok = false;
          break;
        }
        c[target] = c[next];
        target = next;
      }
      if (!ok) continue;
      c[target] = moved;
    }
    const std::int64_t cost = model.cost(candidate);
    ++result.evaluations;
    if (cost <= current_cost) {
      current = std::move(candidate);
      current_cost = cost;
      if (cost < best) {
        best = cost;
        result.order = current;
        ++result.improvements;
      }
    }
  }
  result.cost = best;
  return result;
}

}  // namespace bubblesim::optimizer
