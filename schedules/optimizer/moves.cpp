#include "schedules/optimizer/moves.h"

#include <algorithm>
#include <vector>

namespace bubblesim::optimizer {
namespace {

/// Whether `a` may change places with `b` (different kind or stage: microbatch order stays).
bool may_pass(const Step& a, const Step& b) { return a.kind != b.kind || a.stage != b.stage; }

/// Whether `a` needs `b` directly (same microbatch: F after the previous stage's F, B after its F
/// and the next stage's B, W after its B): then `a` can never run before `b`.
bool needs(const Step& a, const Step& b) {
  if (a.microbatch != b.microbatch) return false;
  switch (a.kind) {
    case StepKind::F:
      return b.kind == StepKind::F && b.stage == a.stage - 1;
    case StepKind::B:
      return (b.kind == StepKind::F && b.stage == a.stage) ||
             (b.kind == StepKind::B && b.stage == a.stage + 1);
    case StepKind::W:
      return b.kind == StepKind::B && b.stage == a.stage;
    default:
      return false;
  }
}

/// Moves ops[from] towards position `to`: all the way (or false) unless `clamp`, then as far as
/// it can go without passing an op of its kind and stage or one it needs (or that needs it).
bool move_op(std::vector<Step>& ops, std::size_t from, std::size_t to, bool clamp = false) {
  if (from == to || from >= ops.size() || to >= ops.size()) return false;
  const Step moved = ops[from];
  std::size_t reach = from;
  if (from < to) {
    while (reach < to && may_pass(moved, ops[reach + 1]) && !needs(ops[reach + 1], moved)) ++reach;
  } else {
    while (reach > to && may_pass(moved, ops[reach - 1]) && !needs(moved, ops[reach - 1])) --reach;
  }
  if (reach == from || (!clamp && reach != to)) return false;
  if (from < reach) {
    std::rotate(ops.begin() + static_cast<std::ptrdiff_t>(from),
                ops.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                ops.begin() + static_cast<std::ptrdiff_t>(reach) + 1);
  } else {
    std::rotate(ops.begin() + static_cast<std::ptrdiff_t>(reach),
                ops.begin() + static_cast<std::ptrdiff_t>(from),
                ops.begin() + static_cast<std::ptrdiff_t>(from) + 1);
  }
  return true;
}

std::size_t pick(std::size_t n, std::mt19937_64& rng) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

/// When `st` could start at the earliest in the replay `eval` (its dependencies' ends).
std::int64_t ready_in(const Problem& pr, const Evaluation& eval, const Step& st) {
  const auto& fe = eval.end[static_cast<int>(StepKind::F)];
  const auto& be = eval.end[static_cast<int>(StepKind::B)];
  const std::size_t i = pr.index(st.stage, st.microbatch);
  switch (st.kind) {
    case StepKind::F:
      return st.stage == 0
                 ? 0
                 : fe[pr.index(st.stage - 1, st.microbatch)] + pr.forward_delay(st.stage - 1);
    case StepKind::B:
      return st.stage + 1 == pr.stages ? fe[i]
                                       : std::max(fe[i], be[pr.index(st.stage + 1, st.microbatch)] +
                                                             pr.backward_delay(st.stage));
    case StepKind::W:
      return be[i];
    default:
      return 0;
  }
}

}  // namespace

bool small_order_move(Order& order, std::mt19937_64& rng) {
  auto& c = order[pick(order.size(), rng)];
  const std::size_t n = c.size();
  if (n < 2) return false;
  const std::size_t i = pick(n - 1, rng);
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
    return move_op(c, i + 1, i);
  }
  std::size_t w = i;
  while (w < n && c[w].kind != StepKind::W) ++w;
  if (w >= n) return false;
  const int delta = std::uniform_int_distribution<int>(-8, 8)(rng);
  if (delta == 0) return false;
  const auto target = static_cast<std::ptrdiff_t>(w) + delta;
  if (target < 0 || target >= static_cast<std::ptrdiff_t>(n)) return false;
  return move_op(c, w, static_cast<std::size_t>(target));
}

bool insert_move(Order& order, std::int32_t reach, std::mt19937_64& rng) {
  auto& c = order[pick(order.size(), rng)];
  const std::size_t n = c.size();
  if (n < 2) return false;
  const std::size_t from = pick(n, rng);
  const std::int32_t delta = std::uniform_int_distribution<std::int32_t>(-reach, reach)(rng);
  const auto to = static_cast<std::ptrdiff_t>(from) + delta;
  if (delta == 0 || to < 0 || to >= static_cast<std::ptrdiff_t>(n)) return false;
  return move_op(c, from, static_cast<std::size_t>(to));
}

bool fill_gap_move(const Problem& problem, Order& order, const Evaluation& eval,
                   std::int32_t device, std::int32_t reach, std::mt19937_64& rng) {
  const std::size_t d = device >= 0 ? static_cast<std::size_t>(device) : pick(order.size(), rng);
  auto& ops = order[d];
  std::vector<std::size_t> gaps;  // positions whose op waited
  for (std::size_t i = 1; i < ops.size(); ++i) {
    const std::int64_t prev_end = eval.end[static_cast<int>(ops[i - 1].kind)]
                                          [problem.index(ops[i - 1].stage, ops[i - 1].microbatch)];
    if (eval.start_of(problem, ops[i]) > prev_end) gaps.push_back(i);
  }
  if (gaps.empty()) return false;
  const std::size_t at = gaps[pick(gaps.size(), rng)];
  const Step& before = ops[at - 1];
  const std::int64_t gap_start =
      eval.end[static_cast<int>(before.kind)][problem.index(before.stage, before.microbatch)];
  std::vector<std::size_t> ready, any;
  const std::size_t last = std::min(ops.size() - 1, at + static_cast<std::size_t>(reach));
  for (std::size_t k = at + 1; k <= last; ++k) {
    bool blocked = false;
    for (std::size_t q = at; q < k && !blocked; ++q)
      blocked = !may_pass(ops[k], ops[q]) || needs(ops[k], ops[q]);
    if (blocked) continue;
    any.push_back(k);
    if (ready_in(problem, eval, ops[k]) <= gap_start) ready.push_back(k);
  }
  const std::vector<std::size_t>& from = ready.empty() ? any : ready;
  if (from.empty()) return false;
  return move_op(ops, from[pick(from.size(), rng)], at);
}

bool apply_move(Order& order, const OrderMove& move) {
  if (move.device < 0 || static_cast<std::size_t>(move.device) >= order.size()) return false;
  return move_op(order[static_cast<std::size_t>(move.device)], static_cast<std::size_t>(move.from),
                 static_cast<std::size_t>(move.to), true);
}

std::vector<OrderMove> critical_moves(const Problem& problem, const Order& order,
                                      const Evaluation& eval, std::int32_t device) {
  const std::size_t n = problem.activations();
  // Position of every F, B and W in its device's list.
  std::vector<std::int32_t> position(3 * n, -1);
  for (const auto& ops : order)
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Step& st = ops[i];
      if (static_cast<int>(st.kind) < 3)
        position[static_cast<std::size_t>(st.kind) * n + problem.index(st.stage, st.microbatch)] =
            static_cast<std::int32_t>(i);
    }
  auto end_of = [&](const Step& st) {
    return eval.end[static_cast<int>(st.kind)][problem.index(st.stage, st.microbatch)];
  };
  const auto d0 = static_cast<std::size_t>(device);
  if (d0 >= order.size() || order[d0].empty()) return {};
  // The op that ends the device's compute span.
  Step at = order[d0].back();
  for (const Step& st : order[d0])
    if (static_cast<int>(st.kind) < 3 && end_of(st) > end_of(at)) at = st;
  struct Block {
    std::size_t device, first, last;  // positions: ops[first..last] ran back to back
  };
  std::vector<Block> blocks;
  std::size_t guard = 0;
  while (guard++ < 3 * n + 8) {
    const std::size_t k = static_cast<std::size_t>(problem.device(at.stage));
    const auto pos = static_cast<std::size_t>(
        position[static_cast<std::size_t>(at.kind) * n + problem.index(at.stage, at.microbatch)]);
    const std::int64_t start = end_of(at) - problem.duration(at.kind, at.stage);
    if (start <= 0) break;
    // Back through the ops before it on its device that ran back to back.
    std::size_t first = pos;
    while (first > 0) {
      const Step& prev = order[k][first - 1];
      if (static_cast<int>(prev.kind) >= 3) break;
      const Step& cur = order[k][first];
      if (end_of(prev) != end_of(cur) - problem.duration(cur.kind, cur.stage)) break;
      --first;
    }
    if (first < pos) blocks.push_back(Block{k, first, pos});
    const Step& head = order[k][first];
    const std::int64_t head_start = end_of(head) - problem.duration(head.kind, head.stage);
    // The dependency that made the block's first op wait.
    Step next = head;
    bool found = false;
    auto try_dep = [&](const Step& dep, std::int64_t delay) {
      if (!found && end_of(dep) >= 0 && end_of(dep) + delay == head_start) {
        next = dep;
        found = true;
      }
    };
    switch (head.kind) {
      case StepKind::F:
        if (head.stage > 0)
          try_dep(Step{StepKind::F, head.stage - 1, head.microbatch},
                  problem.forward_delay(head.stage - 1));
        break;
      case StepKind::B:
        if (head.stage + 1 < problem.stages)
          try_dep(Step{StepKind::B, head.stage + 1, head.microbatch},
                  problem.backward_delay(head.stage));
        try_dep(Step{StepKind::F, head.stage, head.microbatch}, 0);
        break;
      case StepKind::W:
        try_dep(Step{StepKind::B, head.stage, head.microbatch}, 0);
        break;
      default:
        break;
    }
    if (!found) break;  // a copy or the list's start set it
    at = next;
  }
  std::vector<OrderMove> moves;
  for (const Block& b : blocks) {
    const auto d = static_cast<std::int32_t>(b.device);
    for (std::size_t to = b.last; to-- > b.first;)
      moves.push_back({d, static_cast<std::int32_t>(b.last), static_cast<std::int32_t>(to)});
    for (std::size_t to = b.first + 1; to <= b.last; ++to)
      moves.push_back({d, static_cast<std::int32_t>(b.first), static_cast<std::int32_t>(to)});
  }
  return moves;
}

bool random_plan_move(const Problem& problem, const Order& compute, const Evaluation& eval,
                      MemoryPlan& plan, std::mt19937_64& rng) {
  const std::size_t i = pick(plan.choice.size(), rng);
  const auto stage = static_cast<std::int32_t>(i / static_cast<std::size_t>(problem.microbatches));
  const auto microbatch =
      static_cast<std::int32_t>(i % static_cast<std::size_t>(problem.microbatches));
  const int draw = std::uniform_int_distribution<int>(0, 3)(rng);
  switch (plan.choice[i]) {
    case ActivationChoice::Kept:
      if (problem.memory_ops.allow_offload && (draw < 2 || !problem.memory_ops.allow_recompute)) {
        const std::int32_t lead = best_reload_lead(problem, compute, eval, stage, microbatch);
        if (lead < 1) return false;
        plan.choice[i] = ActivationChoice::Offloaded;
        plan.reload_lead[i] = lead;
        return true;
      }
      if (!problem.memory_ops.allow_recompute) return false;
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

}  // namespace bubblesim::optimizer
