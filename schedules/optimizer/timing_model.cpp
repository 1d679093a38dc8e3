#include "schedules/optimizer/timing_model.h"

#include <algorithm>
#include <limits>

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
    if (k >= 3 && memory_ops_) has_[k].assign(n, 0);
  }
  eval_.span.assign(p, 0);
  eval_.first_start.assign(p, -1);
  eval_.last_end.assign(p, 0);
  eval_.peak_bytes.assign(p, 0);
  eval_.first_over.assign(p, -1);
  if (memory_ops_) eval_.reload_wait.assign(n, 0);
  position_.assign(p, 0);
  for (int e = 0; e < 2; ++e) {
    copy_position_[e].assign(p, 0);
    copy_free_[e].assign(p, 0);
  }
  free_.assign(p, 0);
  first_start_.assign(p, -1);
  queued_.assign(p, 0);
  expected_ops_.assign(p, 0);
  for (std::int32_t s = 0; s < problem.stages; ++s)
    expected_ops_[static_cast<std::size_t>(problem.device(s))] +=
        3 * static_cast<std::size_t>(problem.microbatches);
  release_.assign(p, 0);
  if (problem.objective == Objective::Iteration) {
    first_iteration_ = eval_;
    next_start_.assign(p, 0);
  }
}

std::int64_t TimingModel::cost(const Order& order) {
  run(order);
  return eval_.feasible_cost();
}

void TimingModel::wake_stage(std::int32_t stage) {
  if (stage < 0 || stage >= problem_.stages) return;
  const auto d = static_cast<std::size_t>(problem_.device(stage));
  if (queued_[d]) return;
  queued_[d] = 1;
  queue_.push_back(static_cast<std::int32_t>(d));
}

bool TimingModel::mark_memory_ops(const Order& order) {
  has_copies_ = false;
  for (int k = 3; k < kStepKinds; ++k) std::fill(has_[k].begin(), has_[k].end(), 0);
  for (std::size_t d = 0; d < order.size(); ++d) {
    for (const Step& st : order[d]) {
      if (st.kind == StepKind::F || st.kind == StepKind::B || st.kind == StepKind::W) continue;
      if (st.microbatch < 0 || st.microbatch >= problem_.microbatches || st.stage < 0 ||
          st.stage >= problem_.stages || problem_.device(st.stage) != static_cast<std::int32_t>(d))
        return false;
      char& flag = has_[static_cast<int>(st.kind)][problem_.index(st.stage, st.microbatch)];
      if (flag) return false;  // listed twice
      flag = 1;
      if (is_copy(st.kind)) has_copies_ = true;
    }
  }
  // An activation is kept, offloaded (O and L) or recomputed (R), never both.
  const auto& r = has_[static_cast<int>(StepKind::R)];
  const auto& o = has_[static_cast<int>(StepKind::O)];
  const auto& l = has_[static_cast<int>(StepKind::L)];
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (o[i] != l[i] || (r[i] && o[i])) return false;
  }
  return true;
}

// Runs the device's compute ops as far as their dependencies allow; true when one ran.
bool TimingModel::advance_compute(std::int32_t d, const std::vector<Step>& ops) {
  const std::int32_t S = problem_.stages, m = problem_.microbatches;
  const auto du = static_cast<std::size_t>(d);
  const auto& fe = eval_.end[0];
  const auto& be = eval_.end[1];
  bool ran = false;
  std::size_t& pos = position_[du];
  while (pos < ops.size()) {
    const Step st = ops[pos];
    if (is_copy(st.kind)) {
      ++pos;
      continue;
    }
    const std::int32_t s = st.stage;
    if (st.microbatch < 0 || st.microbatch >= m || s < 0 || s >= S || problem_.device(s) != d) {
      malformed_ = true;
      return ran;
    }
    std::int64_t ready = 0;
    const std::size_t i = problem_.index(s, st.microbatch);
    switch (st.kind) {
      case StepKind::F:
        if (s > 0) {
          const std::int64_t e = fe[problem_.index(s - 1, st.microbatch)];
          if (e < 0) return ran;
          ready = e + problem_.forward_delay(s - 1);
        }
        break;
      case StepKind::B:
        if (fe[i] < 0) return ran;
        ready = fe[i];
        if (s + 1 < S) {
          const std::int64_t e = be[problem_.index(s + 1, st.microbatch)];
          if (e < 0) return ran;
          ready = std::max(ready, e + problem_.backward_delay(s));
        }
        if (memory_ops_) {
          std::int64_t reload_end = 0;
          if (has_[static_cast<int>(StepKind::R)][i]) {
            const std::int64_t e = eval_.end[static_cast<int>(StepKind::R)][i];
            if (e < 0) return ran;
            ready = std::max(ready, e);
          }
          if (has_[static_cast<int>(StepKind::L)][i]) {
            reload_end = eval_.end[static_cast<int>(StepKind::L)][i];
            if (reload_end < 0) return ran;
          }
          const std::int64_t without_reload = std::max(free_[du], ready);
          eval_.reload_wait[i] = std::max<std::int64_t>(0, reload_end - without_reload);
          ready = std::max(ready, reload_end);
        }
        break;
      case StepKind::W:
        if (be[i] < 0) return ran;
        ready = be[i];
        break;
      default:  // R
        if (fe[i] < 0) return ran;
        ready = fe[i];
        break;
    }
    if (st.kind == StepKind::R && !memory_ops_) {
      malformed_ = true;
      return ran;
    }
    const std::int64_t start = std::max(free_[du], ready);
    const std::int64_t end = start + problem_.duration(st.kind, s);
    auto& slot = eval_.end[static_cast<int>(st.kind)][i];
    if (slot >= 0) {  // listed twice
      malformed_ = true;
      return ran;
    }
    slot = end;
    if (first_start_[du] < 0) first_start_[du] = start;
    free_[du] = end;
    ++pos;
    ran = true;
    if (st.kind == StepKind::F) wake_stage(s + 1);
    if (st.kind == StepKind::B) wake_stage(s - 1);
  }
  return ran;
}

// Runs the device's copies of one engine (0: O, 1: L) as far as they can go; true when one ran.
bool TimingModel::advance_copies(std::int32_t d, const std::vector<Step>& ops, int engine) {
  const auto du = static_cast<std::size_t>(d);
  const StepKind kind = engine == 0 ? StepKind::O : StepKind::L;
  const auto& source =
      eval_.end[engine == 0 ? static_cast<int>(StepKind::F) : static_cast<int>(StepKind::O)];
  std::size_t& pos = copy_position_[engine][du];
  bool ran = false;
  while (pos < ops.size()) {
    const Step st = ops[pos];
    if (st.kind != kind) {
      ++pos;
      continue;
    }
    const std::size_t i = problem_.index(st.stage, st.microbatch);
    if (source[i] < 0) return ran;
    std::int64_t ready = source[i];
    // The prefetch point: the start of the compute op listed just before the copy.
    for (std::size_t k = pos; k-- > 0;) {
      const Step before = ops[k];
      if (is_copy(before.kind)) continue;
      if (before.microbatch < 0 || before.microbatch >= problem_.microbatches || before.stage < 0 ||
          before.stage >= problem_.stages) {
        malformed_ = true;
        return ran;
      }
      const std::int64_t e =
          eval_.end[static_cast<int>(before.kind)][problem_.index(before.stage, before.microbatch)];
      if (e < 0) return ran;
      ready = std::max(ready, e - problem_.duration(before.kind, before.stage));
      break;
    }
    const std::int64_t start = std::max(copy_free_[engine][du], ready);
    const std::int64_t end = start + problem_.duration(kind, st.stage);
    eval_.end[static_cast<int>(kind)][i] = end;
    copy_free_[engine][du] = end;
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
    next_start[du] = (problem_.global_barrier ? latest + problem_.barrier_ps : eval_.last_end[du]) +
                     problem_.post(d);
    end = std::max(end, next_start[du]);
  }
  return end;
}

std::int64_t TimingModel::iteration_period(const Order& order) {
  const std::int64_t first_end = iteration_end(next_start_);
  // Every device starts the next iteration at one instant: the next one is an exact shift.
  if (std::all_of(next_start_.begin(), next_start_.end(),
                  [&](std::int64_t t) { return t == next_start_.front(); })) {
    return first_end;
  }
  std::swap(eval_, first_iteration_);  // keep the first iteration's replay in eval_
  release_ = next_start_;
  replay(order);
  std::int64_t period = kInfeasible;
  if (eval_.complete) period = iteration_end(next_start_) - first_end;
  std::fill(release_.begin(), release_.end(), 0);
  std::swap(eval_, first_iteration_);
  return period;
}

void TimingModel::replay(const Order& order) {
  const std::int32_t p = problem_.devices;
  const auto pu = static_cast<std::size_t>(p);
  eval_.complete = false;
  eval_.memory_ok = false;
  malformed_ = false;
  for (auto& e : eval_.end) std::fill(e.begin(), e.end(), -1);
  std::fill(eval_.reload_wait.begin(), eval_.reload_wait.end(), 0);
  std::fill(position_.begin(), position_.end(), 0);
  free_ = release_;
  std::fill(first_start_.begin(), first_start_.end(), -1);
  for (int e = 0; e < 2; ++e) {
    std::fill(copy_position_[e].begin(), copy_position_[e].end(), 0);
    copy_free_[e] = release_;
  }
  has_copies_ = false;
  if (order.size() != pu) return;
  if (memory_ops_ && !mark_memory_ops(order)) return;
  queue_.clear();
  for (std::int32_t d = 0; d < p; ++d) {
    queue_.push_back(d);
    queued_[static_cast<std::size_t>(d)] = 1;
  }
  std::size_t head = 0;
  while (head < queue_.size()) {
    const std::int32_t d = queue_[head++];
    const auto du = static_cast<std::size_t>(d);
    queued_[du] = 0;
    const auto& ops = order[du];
    if (!has_copies_) {
      advance_compute(d, ops);
    } else {
      // Compute and copies depend on each other on one device: go round until none can move.
      bool moved = true;
      while (moved && !malformed_) {
        moved = advance_compute(d, ops);
        moved = advance_copies(d, ops, 0) || moved;
        moved = advance_copies(d, ops, 1) || moved;
      }
    }
    if (malformed_) return;
  }
  eval_.complete = true;
  eval_.makespan = 0;
  eval_.span_max = 0;
  for (std::size_t d = 0; d < pu; ++d) {
    std::size_t extra = 0;  // R, O and L
    if (memory_ops_) {
      for (const Step& st : order[d]) extra += is_copy(st.kind) || st.kind == StepKind::R ? 1 : 0;
    }
    if (position_[d] != order[d].size() || order[d].size() != expected_ops_[d] + extra)
      eval_.complete = false;
    if (has_copies_ &&
        (copy_position_[0][d] != order[d].size() || copy_position_[1][d] != order[d].size())) {
      eval_.complete = false;
    }
    eval_.span[d] = first_start_[d] < 0 ? 0 : free_[d] - first_start_[d];
    eval_.first_start[d] = first_start_[d];
    eval_.last_end[d] = std::max({free_[d], copy_free_[0][d], copy_free_[1][d]});
    eval_.makespan = std::max(eval_.makespan, eval_.last_end[d]);
    eval_.span_max = std::max(eval_.span_max, eval_.span[d]);
  }
}

std::int64_t TimingModel::allocation_at_forward(std::int32_t stage, std::int32_t j) const {
  const auto s = static_cast<std::size_t>(stage);
  if (memory_ops_ && has_[static_cast<int>(StepKind::R)][problem_.index(stage, j)]) {
    return std::min(problem_.stage_input_bytes[s], problem_.activation_bytes[s]);
  }
  return problem_.activation_bytes[s];
}

std::int64_t TimingModel::memory_delta(Step st) const {
  const auto su = static_cast<std::size_t>(st.stage);
  const std::int64_t mb = problem_.activation_bytes[su], mw = problem_.weight_grad_bytes[su];
  switch (st.kind) {
    case StepKind::F:
      return allocation_at_forward(st.stage, st.microbatch);
    case StepKind::R:
    case StepKind::L:
      return mb;
    case StepKind::B: {
      std::int64_t freed = mb - mw;
      if (memory_ops_ &&
          has_[static_cast<int>(StepKind::R)][problem_.index(st.stage, st.microbatch)]) {
        freed += allocation_at_forward(st.stage, st.microbatch);
      }
      return -freed;
    }
    case StepKind::W:
      return -mw;
    case StepKind::O:
      return -mb;
  }
  return 0;
}

std::int64_t TimingModel::memory_time(Step st) const {
  const std::int64_t end =
      eval_.end[static_cast<int>(st.kind)][problem_.index(st.stage, st.microbatch)];
  const bool allocates = st.kind == StepKind::F || st.kind == StepKind::R || st.kind == StepKind::L;
  return allocates ? end - problem_.duration(st.kind, st.stage) : end;
}

bool TimingModel::first_over_limit(std::size_t device, std::int64_t memory) {
  eval_.peak_bytes[device] = std::max(eval_.peak_bytes[device], memory);
  return memory > problem_.limit_bytes[device] && eval_.first_over[device] < 0;
}

void TimingModel::account_memory(const Order& order) {
  const auto pu = static_cast<std::size_t>(problem_.devices);
  eval_.memory_ok = true;
  for (std::size_t du = 0; du < pu; ++du) {
    const auto d = static_cast<std::int32_t>(du);
    eval_.peak_bytes[du] = 0;
    eval_.first_over[du] = -1;
    if (has_copies_) {
      account_device_with_copies(d, order[du]);
    } else {
      // One op at a time: the memory when an op allocates is the sum of the deltas before it.
      std::int64_t memory = 0;
      for (const Step& st : order[du]) {
        const std::int64_t delta = memory_delta(st);
        memory += delta;
        if (delta > 0 && first_over_limit(du, memory)) eval_.first_over[du] = memory_time(st);
      }
    }
    if (eval_.peak_bytes[du] > problem_.limit_bytes[du]) eval_.memory_ok = false;
  }
}

void TimingModel::account_device_with_copies(std::int32_t d, const std::vector<Step>& ops) {
  const auto du = static_cast<std::size_t>(d);
  compute_events_.clear();
  reload_events_.clear();
  offload_events_.clear();
  for (const Step& st : ops) {
    auto& list = st.kind == StepKind::O   ? offload_events_
                 : st.kind == StepKind::L ? reload_events_
                                          : compute_events_;
    list.push_back({memory_time(st), memory_delta(st)});
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
  while (c < compute_events_.size() || r < reload_events_.size() || o < offload_events_.size()) {
    const std::int64_t tc = c < compute_events_.size() ? compute_events_[c].time : kNever;
    const std::int64_t tr = r < reload_events_.size() ? reload_events_[r].time : kNever;
    const std::int64_t to = o < offload_events_.size() ? offload_events_[o].time : kNever;
    if (tr <= tc && tr <= to) {
      apply(reload_events_[r++]);
    } else if (tc <= to) {
      apply(compute_events_[c++]);
    } else {
      apply(offload_events_[o++]);
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
