#include "schedules/optimizer/timing_model.h"

#include <algorithm>
#include <limits>

#include "schedules/list_scheduling.h"
#include "schedules/replay_rules.h"

namespace bubblesim::optimizer {

std::int64_t Evaluation::feasible_cost() const {
  return complete && memory_ok ? objective : TimingModel::kInfeasible;
}

TimingModel::TimingModel(const Problem& problem)
    : problem_(problem), memory_ops_(problem.memory_ops_allowed()) {
  const auto p = static_cast<std::size_t>(problem.devices);
  const std::size_t n = problem.activations();
  for (int k = 0; k < kStepKinds; ++k) {
    if (k < 3 || memory_ops_) eval_.end[k].assign(n, -1);
    if (k >= 3 && memory_ops_) marks_.has[k].assign(n, 0);
  }
  eval_.span.assign(p, 0);
  eval_.first_start.assign(p, -1);
  eval_.last_end.assign(p, 0);
  eval_.peak_bytes.assign(p, 0);
  eval_.first_over.assign(p, -1);
  if (memory_ops_) eval_.reload_wait.assign(n, 0);
  streams_.position.assign(p, 0);
  for (int e = 0; e < 2; ++e) {
    streams_.copy_position[e].assign(p, 0);
    streams_.copy_free[e].assign(p, 0);
  }
  streams_.free.assign(p, 0);
  streams_.first_start.assign(p, -1);
  streams_.queued.assign(p, 0);
  expected_ops_.assign(p, 0);
  for (std::int32_t s = 0; s < problem.stages; ++s)
    expected_ops_[static_cast<std::size_t>(problem.device(s))] +=
        3 * static_cast<std::size_t>(problem.microbatches);
  iteration_.release.assign(p, 0);
  if (problem.objective == Objective::Iteration) {
    iteration_.first = eval_;
    iteration_.next_start.assign(p, 0);
  }
}

std::int64_t TimingModel::cost(const Order& order) {
  run(order);
  return eval_.feasible_cost();
}

void TimingModel::wake_stage(std::int32_t stage) {
  if (stage < 0 || stage >= problem_.stages) return;
  const auto d = static_cast<std::size_t>(problem_.device(stage));
  if (streams_.queued[d]) return;
  streams_.queued[d] = 1;
  streams_.queue.push_back(static_cast<std::int32_t>(d));
}

bool TimingModel::mark_memory_ops(const Order& order) {
  marks_.copies = false;
  for (int k = 3; k < kStepKinds; ++k) std::fill(marks_.has[k].begin(), marks_.has[k].end(), 0);
  for (std::size_t d = 0; d < order.size(); ++d) {
    for (const Step& st : order[d]) {
      if (st.kind == StepKind::F || st.kind == StepKind::B || st.kind == StepKind::W) continue;
      if (st.microbatch < 0 || st.microbatch >= problem_.microbatches || st.stage < 0 ||
          st.stage >= problem_.stages || problem_.device(st.stage) != static_cast<std::int32_t>(d))
        return false;
      char& flag = marks_.has[static_cast<int>(st.kind)][problem_.index(st.stage, st.microbatch)];
      if (flag) return false;  // listed twice
      flag = 1;
      if (is_copy(st.kind)) marks_.copies = true;
    }
  }
  // An activation is kept, offloaded (O and L) or recomputed (R), never both.
  const auto& r = marks_.has[static_cast<int>(StepKind::R)];
  const auto& o = marks_.has[static_cast<int>(StepKind::O)];
  const auto& l = marks_.has[static_cast<int>(StepKind::L)];
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (o[i] != l[i] || (r[i] && o[i])) return false;
  }
  return true;
}

// The kernel's parts for the optimizer's orders (list_scheduling.h): the end-time store (F, B and
// W of every activation; R, O and L where the order lists them), and one device's compute ops
// as the lane, with the problem's durations and boundary delays.
struct TimingModel::Ends {
  TimingModel& m;

  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    const auto kind = static_cast<int>(k);
    const std::size_t i = m.problem_.index(s, j);
    if (kind >= static_cast<int>(StepKind::R) && (!m.memory_ops_ || !m.marks_.has[kind][i]))
      return list_scheduling::kAbsent;
    return m.eval_.end[kind][i];
  }
  void set(OpKind k, std::int32_t s, std::int32_t j, std::int64_t e) {
    m.eval_.end[static_cast<int>(k)][m.problem_.index(s, j)] = e;
  }
};

// The same store without reloads: when a backward would start if its reload were not waited for.
struct TimingModel::EndsWithoutReloads {
  const Ends& ends;
  std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
    return k == OpKind::Reload ? list_scheduling::kAbsent : ends.end(k, s, j);
  }
};

struct TimingModel::ComputeRun {
  static constexpr std::uint32_t kKinds =
      list_scheduling::kind_bit(OpKind::Forward) | list_scheduling::kind_bit(OpKind::Backward) |
      list_scheduling::kind_bit(OpKind::Weight) | list_scheduling::kind_bit(OpKind::Recompute);
  TimingModel& m;
  Ends& ends;
  const std::vector<Step>& ops;
  const std::int32_t device;
  list_scheduling::LaneClock clock;
  Op current;
  std::size_t ran_ops = 0;

  // The lane: the device's compute steps in list order, one at a time (copies run on their own
  // engines).
  std::span<const Op> ahead() {
    std::size_t& pos = m.streams_.position[static_cast<std::size_t>(device)];
    while (pos < ops.size() && is_copy(ops[pos].kind)) ++pos;
    if (pos == ops.size()) return {};
    const Step& st = ops[pos];
    const Problem& pr = m.problem_;
    if (st.microbatch < 0 || st.microbatch >= pr.microbatches || st.stage < 0 ||
        st.stage >= pr.stages || pr.device(st.stage) != device ||
        (st.kind == StepKind::R && !m.memory_ops_)) {
      m.streams_.malformed = true;
      return {};
    }
    current = Op{op_kind(st.kind), st.stage, st.microbatch};
    return {&current, 1};
  }
  void ran(std::size_t /*i*/, const list_scheduling::Slot& /*slot*/) {}
  void advance(std::size_t n) {
    m.streams_.position[static_cast<std::size_t>(device)] += n;
    ran_ops += n;
  }

  // The policy.
  std::int64_t arrival(list_scheduling::DependencyKind d, std::int32_t s, std::int32_t /*j*/,
                       std::int64_t e) const {
    const std::int32_t boundary = list_scheduling::transfer_stage(d, s);
    return replay_rules::arrival(e, d == list_scheduling::DependencyKind::Activation
                                        ? m.problem_.forward_delay(boundary)
                                        : m.problem_.backward_delay(boundary));
  }
  std::int64_t length(const Op& op) const {
    return m.problem_.duration(static_cast<StepKind>(op.kind), op.stage);
  }
  bool start(const Op& op, const list_scheduling::Slot& slot) {
    const std::size_t i = m.problem_.index(op.stage, op.microbatch);
    if (m.eval_.end[static_cast<int>(op.kind)][i] >= 0) {  // listed twice
      m.streams_.malformed = true;
      return false;
    }
    if (m.memory_ops_ && op.kind == OpKind::Backward) {
      // How long it waits for its reload beyond every other dependency and its stream.
      const list_scheduling::Inputs without = list_scheduling::inputs_of(
          op, m.problem_.stages, EndsWithoutReloads{ends},
          [&](list_scheduling::DependencyKind d, std::int32_t s, std::int32_t j, std::int64_t e) {
            return arrival(d, s, j, e);
          });
      m.eval_.reload_wait[i] = slot.start - replay_rules::op_start(slot.free, without.ready);
    }
    return true;
  }
  void ended(const Op& op, const list_scheduling::Slot& /*slot*/) {
    list_scheduling::for_each_consumer(
        op.kind, op.stage, op.microbatch, m.problem_.stages,
        [&](OpKind, std::int32_t s, std::int32_t, list_scheduling::DependencyKind d) {
          if (d != list_scheduling::DependencyKind::Local) m.wake_stage(s);
        });
  }
};

// Runs the device's compute ops as far as their dependencies allow; true when one ran.
bool TimingModel::advance_compute(std::int32_t d, const std::vector<Step>& ops) {
  const auto du = static_cast<std::size_t>(d);
  Ends ends{*this};
  ComputeRun run{*this, ends, ops, d, {}, {}, 0};
  run.clock.free = streams_.free[du];
  run.clock.first_start = streams_.first_start[du];
  list_scheduling::run_lane(run, ends, run, problem_.stages);
  streams_.free[du] = run.clock.free;
  streams_.first_start[du] = run.clock.first_start;
  return run.ran_ops > 0;
}

// Runs the device's copies of one engine (0: O, 1: L) as far as they can go; true when one ran.
// A copy waits for its input (the kernel's walk: O for its F, L for its O) and starts no earlier
// than the compute op listed just before it (the prefetch point).
bool TimingModel::advance_copies(std::int32_t d, const std::vector<Step>& ops, int engine) {
  const auto du = static_cast<std::size_t>(d);
  const StepKind kind = engine == 0 ? StepKind::O : StepKind::L;
  const Ends ends{*this};
  std::size_t& pos = streams_.copy_position[engine][du];
  bool ran = false;
  while (pos < ops.size()) {
    const Step& st = ops[pos];
    if (st.kind != kind) {
      ++pos;
      continue;
    }
    list_scheduling::Inputs in = list_scheduling::inputs_of(
        Op{op_kind(kind), st.stage, st.microbatch}, problem_.stages, ends,
        [](list_scheduling::DependencyKind, std::int32_t, std::int32_t, std::int64_t e) {
          return e;  // a copy's input is on its own device
        });
    if (in.pending) return ran;
    for (std::size_t k = pos; k-- > 0;) {
      const Step& before = ops[k];
      if (is_copy(before.kind)) continue;
      if (before.microbatch < 0 || before.microbatch >= problem_.microbatches || before.stage < 0 ||
          before.stage >= problem_.stages) {
        streams_.malformed = true;
        return ran;
      }
      const std::int64_t e =
          eval_.end[static_cast<int>(before.kind)][problem_.index(before.stage, before.microbatch)];
      if (e < 0) return ran;
      in.ready = std::max(in.ready, e - problem_.duration(before.kind, before.stage));
      break;
    }
    const list_scheduling::Slot slot = list_scheduling::place(streams_.copy_free[engine][du], in,
                                                              problem_.duration(kind, st.stage));
    eval_.end[static_cast<int>(kind)][problem_.index(st.stage, st.microbatch)] = slot.end;
    streams_.copy_free[engine][du] = slot.end;
    ++pos;
    ran = true;
  }
  return ran;
}

void TimingModel::run(const Order& order) {
  replay(order);
  if (!eval_.complete) return;
  // Stage-span counts compute ops only (the engine's stage_span_max); the others every stream.
  if (problem_.objective == Objective::StageSpan) {
    eval_.objective = eval_.span_max;
  } else if (problem_.objective == Objective::Makespan) {
    eval_.objective = objective_cost(problem_, eval_.first_start, eval_.last_end);
  }
  account_memory(order);
  if (problem_.objective == Objective::Iteration) eval_.objective = iteration_period(order);
}

std::int64_t TimingModel::iteration_end(std::vector<std::int64_t>& next_start) const {
  std::int64_t latest = 0, end = 0;
  for (std::int64_t e : eval_.last_end) latest = std::max(latest, e);
  for (std::int32_t d = 0; d < problem_.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    next_start[du] = (problem_.iteration.global_barrier ? latest + problem_.iteration.barrier_ps
                                                        : eval_.last_end[du]) +
                     problem_.post(d);
    end = std::max(end, next_start[du]);
  }
  return end;
}

std::int64_t TimingModel::iteration_period(const Order& order) {
  const std::int64_t first_end = iteration_end(iteration_.next_start);
  // Every device starts the next iteration at one instant: the next one is an exact shift.
  if (std::all_of(iteration_.next_start.begin(), iteration_.next_start.end(),
                  [&](std::int64_t t) { return t == iteration_.next_start.front(); })) {
    return first_end;
  }
  std::swap(eval_, iteration_.first);  // keep the first iteration's replay in eval_
  iteration_.release = iteration_.next_start;
  replay(order);
  std::int64_t period = kInfeasible;
  if (eval_.complete) period = iteration_end(iteration_.next_start) - first_end;
  std::fill(iteration_.release.begin(), iteration_.release.end(), 0);
  std::swap(eval_, iteration_.first);
  return period;
}

void TimingModel::replay(const Order& order) {
  const std::int32_t p = problem_.devices;
  const auto pu = static_cast<std::size_t>(p);
  eval_.complete = false;
  eval_.memory_ok = false;
  streams_.malformed = false;
  for (auto& e : eval_.end) std::fill(e.begin(), e.end(), -1);
  std::fill(eval_.reload_wait.begin(), eval_.reload_wait.end(), 0);
  std::fill(streams_.position.begin(), streams_.position.end(), 0);
  streams_.free = iteration_.release;
  std::fill(streams_.first_start.begin(), streams_.first_start.end(), -1);
  for (int e = 0; e < 2; ++e) {
    std::fill(streams_.copy_position[e].begin(), streams_.copy_position[e].end(), 0);
    streams_.copy_free[e] = iteration_.release;
  }
  marks_.copies = false;
  if (order.size() != pu) return;
  if (memory_ops_ && !mark_memory_ops(order)) return;
  streams_.queue.clear();
  for (std::int32_t d = 0; d < p; ++d) {
    streams_.queue.push_back(d);
    streams_.queued[static_cast<std::size_t>(d)] = 1;
  }
  std::size_t head = 0;
  while (head < streams_.queue.size()) {
    const std::int32_t d = streams_.queue[head++];
    const auto du = static_cast<std::size_t>(d);
    streams_.queued[du] = 0;
    const auto& ops = order[du];
    if (!marks_.copies) {
      advance_compute(d, ops);
    } else {
      // Compute and copies depend on each other on one device: go round until none can move.
      bool moved = true;
      while (moved && !streams_.malformed) {
        moved = advance_compute(d, ops);
        moved = advance_copies(d, ops, 0) || moved;
        moved = advance_copies(d, ops, 1) || moved;
      }
    }
    if (streams_.malformed) return;
  }
  eval_.complete = true;
  eval_.makespan = 0;
  eval_.span_max = 0;
  for (std::size_t d = 0; d < pu; ++d) {
    std::size_t extra = 0;  // R, O and L
    if (memory_ops_) {
      for (const Step& st : order[d]) extra += is_copy(st.kind) || st.kind == StepKind::R ? 1 : 0;
    }
    if (streams_.position[d] != order[d].size() || order[d].size() != expected_ops_[d] + extra)
      eval_.complete = false;
    if (marks_.copies && (streams_.copy_position[0][d] != order[d].size() ||
                          streams_.copy_position[1][d] != order[d].size())) {
      eval_.complete = false;
    }
    eval_.span[d] = streams_.first_start[d] < 0 ? 0 : streams_.free[d] - streams_.first_start[d];
    eval_.first_start[d] = streams_.first_start[d];
    eval_.last_end[d] =
        std::max({streams_.free[d], streams_.copy_free[0][d], streams_.copy_free[1][d]});
    eval_.makespan = std::max(eval_.makespan, eval_.last_end[d]);
    eval_.span_max = std::max(eval_.span_max, eval_.span[d]);
  }
}

MemoryStep TimingModel::memory_step(Step st) const {
  const bool recomputed =
      memory_ops_ &&
      marks_.has[static_cast<int>(StepKind::R)][problem_.index(st.stage, st.microbatch)];
  return problem_.memory_step(st.kind, st.stage, recomputed);
}

std::int64_t TimingModel::start_time(Step st) const {
  return eval_.end[static_cast<int>(st.kind)][problem_.index(st.stage, st.microbatch)] -
         problem_.duration(st.kind, st.stage);
}

std::int64_t TimingModel::end_time(Step st) const {
  return eval_.end[static_cast<int>(st.kind)][problem_.index(st.stage, st.microbatch)];
}

bool TimingModel::first_over_limit(std::size_t device, std::int64_t memory) {
  eval_.peak_bytes[device] = std::max(eval_.peak_bytes[device], memory);
  return memory > problem_.memory.limit_bytes[device] && eval_.first_over[device] < 0;
}

void TimingModel::account_memory(const Order& order) {
  const auto pu = static_cast<std::size_t>(problem_.devices);
  eval_.memory_ok = true;
  for (std::size_t du = 0; du < pu; ++du) {
    const auto d = static_cast<std::int32_t>(du);
    eval_.peak_bytes[du] = 0;
    eval_.first_over[du] = -1;
    if (marks_.copies) {
      account_device_with_copies(d, order[du]);
    } else {
      // One op at a time: each op allocates at its start and frees at its end.
      std::int64_t memory = 0;
      for (const Step& st : order[du]) {
        const MemoryStep m = memory_step(st);
        if (m.allocated > Bytes::zero()) {
          memory += m.allocated.count();
          if (first_over_limit(du, memory)) eval_.first_over[du] = start_time(st);
        }
        memory -= m.freed.count();
      }
    }
    if (eval_.peak_bytes[du] > problem_.memory.limit_bytes[du]) eval_.memory_ok = false;
  }
}

void TimingModel::account_device_with_copies(std::int32_t d, const std::vector<Step>& ops) {
  const auto du = static_cast<std::size_t>(d);
  events_.compute.clear();
  events_.reload.clear();
  events_.offload.clear();
  for (const Step& st : ops) {
    auto& list = st.kind == StepKind::O   ? events_.offload
                 : st.kind == StepKind::L ? events_.reload
                                          : events_.compute;
    // Each stream runs one op at a time: its start and end events stay in time order.
    const MemoryStep m = memory_step(st);
    if (m.allocated > Bytes::zero()) list.push_back({start_time(st), m.allocated.count()});
    if (m.freed > Bytes::zero()) list.push_back({end_time(st), -m.freed.count()});
  }
  // Each list is in time order (one stream each). Merge; on equal times an L's allocation comes
  // first and an O's release last (the worse order, see the header).
  std::size_t c = 0, r = 0, o = 0;
  std::int64_t memory = 0;
  auto apply = [&](const MemoryEvent& e) {
    memory += e.delta;
    if (e.delta > 0 && first_over_limit(du, memory)) eval_.first_over[du] = e.time;
  };
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  while (c < events_.compute.size() || r < events_.reload.size() || o < events_.offload.size()) {
    const std::int64_t tc = c < events_.compute.size() ? events_.compute[c].time : kNever;
    const std::int64_t tr = r < events_.reload.size() ? events_.reload[r].time : kNever;
    const std::int64_t to = o < events_.offload.size() ? events_.offload[o].time : kNever;
    if (tr <= tc && tr <= to) {
      apply(events_.reload[r++]);
    } else if (tc <= to) {
      apply(events_.compute[c++]);
    } else {
      apply(events_.offload[o++]);
    }
  }
}

std::int64_t milp_objective(const Problem& problem, const Evaluation& evaluation) {
  if (problem.objective != Objective::Iteration) return evaluation.objective;
  return objective_cost(problem, evaluation.first_start, evaluation.last_end);
}

Evaluation evaluate(const Problem& problem, const Order& order) {
  TimingModel model(problem);
  model.cost(order);
  return model.last();
}

}  // namespace bubblesim::optimizer
