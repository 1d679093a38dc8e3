#include "schedules/optimizer/memory_plan.h"

#include <algorithm>

namespace bubblesim::optimizer {
namespace {

/// Where each F and B sits in a device's F/B/W order (rank among the device's ops).
struct Ranks {
  std::vector<std::int32_t> forward, backward;  // per stage * m + microbatch

  Ranks(const Problem& problem, const Order& compute) {
    const std::size_t n = problem.activations();
    forward.assign(n, -1);
    backward.assign(n, -1);
    for (std::size_t d = 0; d < compute.size(); ++d) {
      for (std::size_t r = 0; r < compute[d].size(); ++r) {
        const Step& st = compute[d][r];
        const std::size_t i = problem.index(st.stage, st.microbatch);
        if (st.kind == StepKind::F) forward[i] = static_cast<std::int32_t>(r);
        if (st.kind == StepKind::B) backward[i] = static_cast<std::int32_t>(r);
      }
    }
  }
};

std::int32_t lead_for(const Problem& problem, const Order& compute, const Ranks& ranks,
                      const Evaluation& eval, std::int32_t stage, std::int32_t microbatch) {
  const std::size_t i = problem.index(stage, microbatch);
  const std::int32_t rf = ranks.forward[i], rb = ranks.backward[i];
  if (rf < 0 || rb < 0 || rb - rf < 2) return 0;
  const std::int64_t b_start = eval.start_of(problem, Step{StepKind::B, stage, microbatch});
  const std::int64_t copy = problem.duration(StepKind::L, stage);
  const auto& ops = compute[static_cast<std::size_t>(problem.device(stage))];
  // The latest op whose start leaves the copy time before the B; else the earliest after the F.
  for (std::int32_t r = rb - 1; r > rf; --r) {
    if (eval.start_of(problem, ops[static_cast<std::size_t>(r)]) + copy <= b_start) return rb - r;
  }
  return rb - rf - 1;
}

}  // namespace

MemoryPlan MemoryPlan::keep_all(const Problem& problem) {
  MemoryPlan plan;
  const std::size_t n = problem.activations();
  plan.choice.assign(n, ActivationChoice::Kept);
  plan.reload_lead.assign(n, 0);
  return plan;
}

std::int64_t MemoryPlan::count(ActivationChoice c) const {
  return static_cast<std::int64_t>(std::count(choice.begin(), choice.end(), c));
}

std::int64_t MemoryPlan::decisions() const {
  return static_cast<std::int64_t>(choice.size()) - count(ActivationChoice::Kept);
}

std::optional<Order> materialize(const Problem& problem, const Order& compute,
                                 const MemoryPlan& plan) {
  Order out(compute.size());
  std::vector<std::vector<Step>> reloads_after;  // per rank of the device's order
  std::vector<std::int32_t> forward_rank(problem.activations(), -1);
  for (std::size_t d = 0; d < compute.size(); ++d) {
    const auto& ops = compute[d];
    reloads_after.assign(ops.size(), {});
    for (std::size_t r = 0; r < ops.size(); ++r) {
      const Step& st = ops[r];
      const std::size_t i = problem.index(st.stage, st.microbatch);
      if (st.kind == StepKind::F) forward_rank[i] = static_cast<std::int32_t>(r);
      if (st.kind != StepKind::B) continue;
      if (plan.choice[i] != ActivationChoice::Offloaded) continue;
      const auto trigger = static_cast<std::int64_t>(r) - plan.reload_lead[i];
      if (plan.reload_lead[i] < 1 || trigger <= forward_rank[i]) {
        return std::nullopt;  // the reload must be listed after its forward
      }
      reloads_after[static_cast<std::size_t>(trigger)].push_back(
          Step{StepKind::L, st.stage, st.microbatch});  // in B order
    }
    auto& list = out[d];
    list.reserve(ops.size() + 2 * reloads_after.size());
    for (std::size_t r = 0; r < ops.size(); ++r) {
      const Step& st = ops[r];
      const ActivationChoice c = plan.choice[problem.index(st.stage, st.microbatch)];
      if (st.kind == StepKind::B && c == ActivationChoice::Recomputed)
        list.push_back(Step{StepKind::R, st.stage, st.microbatch});
      list.push_back(st);
      if (st.kind == StepKind::F && c == ActivationChoice::Offloaded)
        list.push_back(Step{StepKind::O, st.stage, st.microbatch});
      list.insert(list.end(), reloads_after[r].begin(), reloads_after[r].end());
    }
  }
  return out;
}

std::int32_t best_reload_lead(const Problem& problem, const Order& compute, const Evaluation& eval,
                              std::int32_t stage, std::int32_t microbatch) {
  return lead_for(problem, compute, Ranks(problem, compute), eval, stage, microbatch);
}

namespace {

/// Offloaded activations whose B waited for the reload get it one op earlier (while it stays after
/// the F); true when one moved.
bool advance_late_reloads(const Ranks& ranks, const Evaluation& eval, MemoryPlan& plan) {
  bool moved = false;
  for (std::size_t i = 0; i < plan.choice.size(); ++i) {
    if (plan.choice[i] != ActivationChoice::Offloaded || eval.reload_wait[i] == 0) continue;
    if (ranks.backward[i] - (plan.reload_lead[i] + 1) > ranks.forward[i]) {
      ++plan.reload_lead[i];
      moved = true;
    }
  }
  return moved;
}

/// At time t, device d's first allocation over the limit: offload the resident activation that
/// lives longest and whose copies fit (the D2H engine, in F order, done by t; the reload after t),
/// else recompute the resident one whose B is latest. False when no resident activation can leave.
bool make_room(const Problem& problem, const Order& compute, const Ranks& ranks,
               const Evaluation& eval, std::int32_t d, std::int64_t t, MemoryPlan& plan) {
  const auto& fe = eval.end[static_cast<int>(StepKind::F)];
  const auto& be = eval.end[static_cast<int>(StepKind::B)];
  const auto& ops = compute[static_cast<std::size_t>(d)];
  // When would a new O for each activation end, queued behind the O's already decided?
  std::vector<std::int64_t> offload_end(problem.activations(), 0);
  std::int64_t engine_free = 0;
  for (const Step& st : ops) {
    if (st.kind != StepKind::F) continue;
    const std::size_t i = problem.index(st.stage, st.microbatch);
    offload_end[i] = std::max(engine_free, fe[i]) + problem.duration(StepKind::O, st.stage);
    if (plan.choice[i] == ActivationChoice::Offloaded)
      engine_free = eval.end[static_cast<int>(StepKind::O)][i];
  }
  std::size_t best_offload = 0, best_recompute = 0;
  bool offload_found = false, recompute_found = false;
  std::int32_t best_lead = 0;
  std::int64_t best_window = -1, latest_b = -1;
  for (const Step& st : ops) {
    if (st.kind != StepKind::F) continue;
    const std::int32_t s = st.stage, j = st.microbatch;
    const std::size_t i = problem.index(s, j);
    if (plan.choice[i] != ActivationChoice::Kept) continue;
    const std::int64_t b_start = eval.start_of(problem, Step{StepKind::B, s, j});
    if (eval.start_of(problem, st) > t || be[i] <= t) continue;  // not resident at t
    const std::int64_t window = b_start - fe[i];
    // Its release must come before t: at equal times the model counts an offload's release last.
    if (problem.memory_ops.allow_offload && offload_end[i] < t &&
        b_start - problem.duration(StepKind::L, s) > t && window > best_window) {
      const std::int32_t lead = lead_for(problem, compute, ranks, eval, s, j);
      if (lead >= 1) {
        best_window = window;
        best_offload = i;
        offload_found = true;
        best_lead = lead;
      }
    }
    if (problem.memory_ops.allow_recompute && b_start > t && b_start > latest_b) {
      latest_b = b_start;
      best_recompute = i;
      recompute_found = true;
    }
  }
  if (offload_found) {
    plan.choice[best_offload] = ActivationChoice::Offloaded;
    plan.reload_lead[best_offload] = best_lead;
    return true;
  }
  if (!recompute_found) return false;
  plan.choice[best_recompute] = ActivationChoice::Recomputed;
  return true;
}

/// Keeps again every activation whose decision is not needed (same cost, still fits), latest
/// first: the greedy took them in time order. Bounded to about 2e7 op replays.
void drop_unneeded(const Problem& problem, const Order& compute, TimingModel& model,
                   FittedPlan& fitted) {
  // The replay size estimated as devices x the first device's list.
  const std::size_t ops_per_replay = std::max<std::size_t>(
      1, fitted.order.empty() ? 1 : fitted.order.size() * fitted.order.front().size());
  std::int64_t replays_left =
      std::max<std::int64_t>(16, static_cast<std::int64_t>(20'000'000 / ops_per_replay));
  for (std::size_t k = fitted.plan.choice.size(); k-- > 0 && replays_left > 0;) {
    if (fitted.plan.choice[k] == ActivationChoice::Kept) continue;
    MemoryPlan trial = fitted.plan;
    trial.choice[k] = ActivationChoice::Kept;
    trial.reload_lead[k] = 0;
    std::optional<Order> candidate = materialize(problem, compute, trial);
    if (!candidate) continue;
    const std::int64_t c = model.cost(*candidate);
    --replays_left;
    if (c <= fitted.cost) {
      fitted.plan = std::move(trial);
      fitted.order = std::move(*candidate);
      fitted.cost = c;
    }
  }
}

}  // namespace

namespace {

/// The repair loop from `start`: replay, give late reloads an earlier prefetch point, make room
/// at every device's first allocation over the limit; repeated until the order fits (with `drop`,
/// then the decisions that are not needed are dropped).
std::optional<FittedPlan> fit_from(const Problem& problem, const Order& compute, TimingModel& model,
                                   const Ranks& ranks, MemoryPlan start, bool drop) {
  FittedPlan fitted{std::move(start), {}, TimingModel::kInfeasible};
  const auto max_rounds = static_cast<std::int32_t>(6 * problem.activations() /
                                                    static_cast<std::size_t>(problem.devices)) +
                          64;
  for (std::int32_t round = 0; round < max_rounds; ++round) {
    std::optional<Order> next = materialize(problem, compute, fitted.plan);
    if (!next) return std::nullopt;
    fitted.order = std::move(*next);
    fitted.cost = model.cost(fitted.order);
    const Evaluation& ev = model.last();
    if (!ev.complete) return std::nullopt;
    bool changed = problem.memory_ops.allow_offload && advance_late_reloads(ranks, ev, fitted.plan);
    for (std::int32_t d = 0; d < problem.devices; ++d) {
      const std::int64_t t = ev.first_over[static_cast<std::size_t>(d)];
      if (t < 0) continue;
      // Without offload and recompute only the order could make room.
      if (!problem.memory_ops_allowed() ||
          !make_room(problem, compute, ranks, ev, d, t, fitted.plan)) {
        return std::nullopt;
      }
      changed = true;
    }
    if (!changed) {
      if (!ev.memory_ok) return std::nullopt;
      if (drop) drop_unneeded(problem, compute, model, fitted);
      return fitted;
    }
  }
  return std::nullopt;  // did not settle within the rounds
}

/// PipeOffload's policy as a starting plan: per device, offload the activations whose copies to
/// host and back fit between their F's end and their B's start in the replay of `compute` with
/// everything kept, the `share` of them with the longest such windows (PipeOffload offloads its
/// first chunk, the one whose activations live longest), each reloaded as late as still ends
/// before its B. Where the first-overflow greedy (which only offloads what can have left by the
/// time of an overflow) runs out of candidates, as in a dense warm-up where every F follows the
/// last one at once, offloading ahead of the overflow does not; a share below 1 leaves the copy
/// engines time when copies take about as long as the compute.
std::optional<MemoryPlan> offload_longest(const Problem& problem, const Order& compute,
                                          const Evaluation& ev, const Ranks& ranks, double share) {
  MemoryPlan plan = MemoryPlan::keep_all(problem);
  const auto& fe = ev.end[static_cast<int>(StepKind::F)];
  bool any = false;
  for (std::int32_t d = 0; d < problem.devices; ++d) {
    std::vector<std::pair<std::int64_t, Step>> candidates;  // (window, F)
    for (const Step& st : compute[static_cast<std::size_t>(d)]) {
      if (st.kind != StepKind::F) continue;
      const std::int64_t round_trip =
          problem.duration(StepKind::O, st.stage) + problem.duration(StepKind::L, st.stage);
      const std::int64_t window = ev.start_of(problem, Step{StepKind::B, st.stage, st.microbatch}) -
                                  fe[problem.index(st.stage, st.microbatch)];
      if (window >= round_trip) candidates.emplace_back(window, st);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    const auto n = static_cast<std::size_t>(share * static_cast<double>(candidates.size()) + 0.5);
    for (std::size_t k = 0; k < n && k < candidates.size(); ++k) {
      const Step st = candidates[k].second;
      const std::int32_t lead = lead_for(problem, compute, ranks, ev, st.stage, st.microbatch);
      if (lead < 1) continue;
      const std::size_t i = problem.index(st.stage, st.microbatch);
      plan.choice[i] = ActivationChoice::Offloaded;
      plan.reload_lead[i] = lead;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return plan;
}

}  // namespace

std::optional<FittedPlan> fit_memory(const Problem& problem, const Order& compute,
                                     TimingModel& model) {
  const Ranks ranks(problem, compute);
  std::optional<FittedPlan> best =
      fit_from(problem, compute, model, ranks, MemoryPlan::keep_all(problem), true);
  // Nothing to offload when the order fits as it is.
  if (!problem.memory_ops.allow_offload || (best && best->plan.decisions() == 0)) return best;
  std::optional<Order> kept = materialize(problem, compute, MemoryPlan::keep_all(problem));
  if (!kept) return best;
  model.cost(*kept);
  const Evaluation ev = model.last();
  if (!ev.complete) return best;
  for (const double share : {1.0, 0.5, 0.25}) {
    std::optional<MemoryPlan> start = offload_longest(problem, compute, ev, ranks, share);
    if (!start) continue;
    // Dropping unneeded decisions is the costly part (a replay per decision): only for a winner.
    std::optional<FittedPlan> other =
        fit_from(problem, compute, model, ranks, std::move(*start), false);
    if (!other || (best && other->cost >= best->cost)) continue;
    drop_unneeded(problem, compute, model, *other);
    best = std::move(other);
  }
  return best;
}

}  // namespace bubblesim::optimizer
