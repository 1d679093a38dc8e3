#include "schedules/optimizer/search.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include "schedules/optimizer/cool_down.h"
#include "schedules/optimizer/greedy.h"
#include "schedules/optimizer/moves.h"
#include "schedules/optimizer/seeds.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {
namespace {

/// One point of the search: a compute order, its plan, the materialized order and its replay.
struct State {
  Order compute;
  MemoryPlan plan;
  Order order;
  std::int64_t cost = TimingModel::kInfeasible;
  std::int64_t spread = 0;  // tie-breaker: the sum over devices of what the objective takes
  std::int64_t decisions = 0;
  Evaluation eval;
  std::string name;

  /// Lexicographic: cost, then fewer offload / recompute decisions, then the spread.
  bool better_than(const State& o) const {
    if (cost != o.cost) return cost < o.cost;
    if (decisions != o.decisions) return decisions < o.decisions;
    return spread < o.spread;
  }
  /// The local search's acceptance: cost, then spread; more offload / recompute decisions at
  /// equal cost are accepted (a decision often pays only after an order move uses the room it
  /// frees), while the best state still prefers fewer.
  bool acceptable_after(const State& o) const {
    if (cost != o.cost) return cost < o.cost;
    return spread <= o.spread;
  }
};

std::int64_t spread_of(const Problem& pr, const Evaluation& ev) {
  std::int64_t total = 0;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    total += pr.objective == Objective::StageSpan ? ev.span[du] : ev.last_end[du];
  }
  return total;
}

/// The device that sets the cost in `ev` (largest span, or latest end).
std::int32_t critical_device(const Problem& pr, const Evaluation& ev) {
  std::int32_t best = 0;
  std::int64_t worst = -1;
  for (std::int32_t d = 0; d < pr.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const std::int64_t v =
        pr.objective == Objective::StageSpan ? ev.span[du] : ev.last_end[du] + pr.post(d);
    if (v > worst) {
      worst = v;
      best = d;
    }
  }
  return best;
}

class Search {
 public:
  Search(const Problem& pr, const SearchSettings& settings)
      : pr_(pr), settings_(settings), model_(pr), rng_(settings.seed) {
    plans_ = pr.memory_ops_allowed();
  }

  SearchResult run() {
    SearchResult result;
    fit_seeds();
    if (pool_.empty() && !finished_.empty()) pool_.push_back(finished_.front());
    if (pool_.empty()) {
      result.evaluations = evaluations_;
      return result;
    }
    best_ = pool_.front();
    State current = best_;
    result.seed_name = best_.name;
    result.seed_cost = best_.cost;
    const std::int64_t ops = static_cast<std::int64_t>(3 * pr_.activations());
    const std::int64_t stall_limit = std::clamp<std::int64_t>(2 * ops, 400, 20000);
    std::int64_t stall = 0, since_window = 0;
    std::size_t next_seed = 1;
    while (!stopped(result)) {
      if (stall >= stall_limit) {
        stall = 0;
        if (settings_.window && since_window >= 4) {
          since_window = 0;
          report("MILP window");
          ++result.windows;
          std::int64_t used = 0;
          auto better = settings_.window(best_.order, best_.plan, best_.cost, used);
          evaluations_ += used;
          if (better) {
            State s = make_state(better->first, better->second, "window");
            if (s.cost < best_.cost) {
              best_ = s;
              current = s;
              critical_valid_ = false;
              ++result.windows_improved;
              ++improvements_;
              continue;
            }
          }
        }
        ++since_window;
        ++restarts_;
        current = restart(next_seed);
        critical_valid_ = false;
        if (current.better_than(best_)) accept_best(current);
        continue;
      }
      State candidate;
      if (!neighbour(current, candidate)) {
        ++stall;
        continue;
      }
      if (candidate.acceptable_after(current)) {
        if (candidate.cost < current.cost)
          stall = 0;
        else
          ++stall;
        current = std::move(candidate);
        if (current.better_than(best_)) accept_best(current);
      } else {
        ++stall;
      }
    }
    polish_cool_down();
    if (!finished_.empty() && finished_.front().better_than(best_)) {
      best_ = finished_.front();
      result.seed_name = best_.name;
      result.seed_cost = best_.cost;
    }
    result.feasible = true;
    result.order = best_.order;
    result.compute_order = best_.compute;
    result.plan = best_.plan;
    result.cost = best_.cost;
    result.evaluations = evaluations_;
    result.improvements = improvements_;
    result.restarts = restarts_;
    return result;
  }

 private:
  void accept_best(const State& s) {
    if (s.cost < best_.cost) {
      ++improvements_;
      report("local search");
    }
    best_ = s;
  }

  /// The best order with its cool-down rebuilt (cool_down.h), kept when it is better: a change
  /// of many W's at once that the local moves do not make (one evaluation, without offload and
  /// recompute).
  void polish_cool_down() {
    if (plans_ || best_.cost <= settings_.bound) return;
    std::optional<Order> rebuilt = rebuild_cool_down(pr_, best_.compute);
    if (!rebuilt || *rebuilt == best_.compute) return;
    State s = make_state(*rebuilt, best_.plan, best_.name);
    if (s.better_than(best_)) accept_best(s);
  }

  bool stopped(SearchResult& result) {
    if (best_.cost <= settings_.bound ||
        (!finished_.empty() && finished_.front().cost <= settings_.bound)) {
      result.stopped = "lower bound";
      return true;
    }
    if (settings_.gap > 0 && best_.cost > 0 &&
        static_cast<double>(best_.cost - settings_.bound) <=
            settings_.gap * static_cast<double>(best_.cost)) {
      result.stopped = "gap";
      return true;
    }
    if (settings_.budget_evals > 0 && evaluations_ >= settings_.budget_evals) {
      result.stopped = "budget";
      return true;
    }
    if ((++checks_ & 31) == 0) {
      if (passed(settings_.deadline)) {
        result.stopped = "time limit";
        return true;
      }
      if ((checks_ & 1023) == 0) report("local search");
    }
    return false;
  }

  void report(const std::string& phase) {
    if (!settings_.progress) return;
    settings_.progress(SearchProgress{best_.cost, settings_.bound, evaluations_, restarts_, phase});
  }

  /// Materializes and replays (compute, plan); cost kInfeasible when it does not fit.
  State make_state(const Order& compute, const MemoryPlan& plan, std::string name) {
    State s;
    s.compute = compute;
    s.plan = plan;
    s.name = std::move(name);
    if (plans_) {
      std::optional<Order> o = materialize(pr_, compute, plan);
      if (!o) return s;
      s.order = std::move(*o);
    } else {
      s.order = compute;
    }
    s.cost = model_.cost(s.order);
    ++evaluations_;
    if (s.cost >= TimingModel::kInfeasible) return s;
    s.eval = model_.last();
    s.spread = spread_of(pr_, s.eval);
    s.decisions = plan.decisions();
    return s;
  }

  /// The plan that fits `compute` to the limit (offload / recompute decisions when allowed), or
  /// nullopt; one evaluation.
  std::optional<MemoryPlan> fit_plan(const Order& compute) {
    std::optional<FittedPlan> f = fit_memory(pr_, compute, model_);
    ++evaluations_;
    if (!f || f->cost >= TimingModel::kInfeasible) return std::nullopt;
    return std::move(f->plan);
  }

  /// `compute` fitted to the limit.
  State fitted(const Order& compute, std::string name) {
    const std::optional<MemoryPlan> plan = fit_plan(compute);
    return plan ? make_state(compute, *plan, std::move(name)) : State{};
  }

  void fit_seeds() {
    std::vector<Seed> seeds = seed_orders(pr_, settings_.deadline);
    // Seeds can repeat an order (the list scheduler at several limits, an eager-W variant of an
    // order whose W's were eager already: 83 of 185 with offload at p 16, m 128). fit_memory is a
    // pure function of the order, so a repeated one takes the plan found for it before, counted
    // as one evaluation as fitting it again would be (the budget runs out at the same point).
    std::map<Order, std::optional<MemoryPlan>> plans;
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      // Past the deadline only the required seeds (seeds.h) and, until one fits, the others.
      const bool have = !pool_.empty() || !finished_.empty();
      if (!seeds[k].required && have && passed(settings_.deadline)) continue;
      const auto [known, first] = plans.try_emplace(seeds[k].order);
      if (first) {
        known->second = fit_plan(seeds[k].order);
      } else {
        ++evaluations_;
      }
      if (!known->second) continue;
      State s = make_state(seeds[k].order, *known->second, seeds[k].name);
      if (s.cost >= TimingModel::kInfeasible) continue;
      (seeds[k].finished ? finished_ : pool_).push_back(std::move(s));
      if ((k & 7) == 0) report("seeds");
    }
    const auto by_cost = [](const State& a, const State& b) { return a.better_than(b); };
    std::stable_sort(finished_.begin(), finished_.end(), by_cost);
    if (finished_.size() > 1) finished_.resize(1);
    std::stable_sort(pool_.begin(), pool_.end(), by_cost);
    // Keep the distinct best few for restarts.
    std::vector<State> kept;
    for (State& s : pool_) {
      if (kept.size() >= 8) break;
      if (!kept.empty() && s.cost == kept.back().cost && s.spread == kept.back().spread) continue;
      kept.push_back(std::move(s));
    }
    pool_ = std::move(kept);
  }

  bool neighbour(const State& current, State& out) {
    const int draw = std::uniform_int_distribution<int>(0, 99)(rng_);
    if (plans_ && draw < 40) {
      MemoryPlan plan = current.plan;
      if (!random_plan_move(pr_, current.compute, current.eval, plan, rng_)) return false;
      out = make_state(current.compute, plan, current.name);
      return out.cost < TimingModel::kInfeasible;
    }
    Order compute = current.compute;
    bool moved = false;
    const int order_draw = plans_ ? (draw - 40) * 100 / 60 : draw;
    // Half of the order moves walk the critical-block neighbourhood of the current state in turn.
    if (order_draw < 50) {
      if (!critical_valid_) {
        critical_ =
            critical_moves(pr_, current.compute, current.eval, critical_device(pr_, current.eval));
        critical_next_ = 0;
        critical_valid_ = true;
      }
      while (!moved && critical_next_ < critical_.size())
        moved = apply_move(compute, critical_[critical_next_++]);
      if (moved) {
        out = make_state(compute, current.plan, current.name);
        return out.cost < TimingModel::kInfeasible;
      }
    }
    if (order_draw < 25) {
      moved = small_order_move(compute, rng_);
    } else if (order_draw < 45) {
      moved = insert_move(compute, 16, rng_);
    } else {
      const std::int32_t device = std::uniform_int_distribution<int>(0, 1)(rng_) == 0
                                      ? critical_device(pr_, current.eval)
                                      : -1;
      moved = fill_gap_move(pr_, compute, current.eval, device, 24, rng_);
    }
    if (!moved) return false;
    out = make_state(compute, current.plan, current.name);
    return out.cost < TimingModel::kInfeasible;
  }

  /// A new current state: the best with a kick of random moves, the next seed, or a randomized
  /// greedy order, in turn.
  State restart(std::size_t& next_seed) {
    const std::int64_t kind = restarts_ % 4;
    if (kind == 2 && pool_.size() > 1) {
      const State& s = pool_[next_seed];
      next_seed = next_seed + 1 < pool_.size() ? next_seed + 1 : 1;
      return s;
    }
    if (kind == 3) {
      GreedyRules rules =
          greedy_rule_set()[static_cast<std::size_t>(restarts_ / 4) % greedy_rule_set().size()];
      rules.noise = 0.3;
      Problem limited = pr_;
      if (plans_) {
        for (auto& l : limited.memory.limit_bytes) l = std::numeric_limits<std::int64_t>::max() / 8;
      }
      if (std::optional<Order> o = greedy_schedule(limited, rules, &rng_)) {
        State s = fitted(*o, "greedy restart");
        if (s.cost < TimingModel::kInfeasible) return s;
      }
    }
    const std::int64_t kicks = 3 + (restarts_ / 4) % 8;
    for (int attempt = 0; attempt < 4; ++attempt) {
      Order compute = best_.compute;
      for (std::int64_t k = 0; k < kicks; ++k) insert_move(compute, 8, rng_);
      State s = make_state(compute, best_.plan, best_.name);
      if (s.cost < TimingModel::kInfeasible) return s;
    }
    return best_;
  }

  const Problem& pr_;
  const SearchSettings& settings_;
  TimingModel model_;
  std::mt19937_64 rng_;
  bool plans_ = false;
  std::vector<State> pool_;
  std::vector<State> finished_;  // the best finished seed (seeds.h), compared with at the end
  State best_;
  std::int64_t evaluations_ = 0, improvements_ = 0, restarts_ = 0, checks_ = 0;
  std::vector<OrderMove> critical_;  // the critical-block moves of the current state
  std::size_t critical_next_ = 0;
  bool critical_valid_ = false;
};

}  // namespace

SearchResult run_search(const Problem& problem, const SearchSettings& settings) {
  return Search(problem, settings).run();
}

}  // namespace bubblesim::optimizer
