#include "schedules/optimizer/timing_model.h"

#include <algorithm>

namespace bubblesim::optimizer {

std::string_view objective_name(Objective o) { return o == Objective::Makespan ? "makespan" : "stage-span"; }

std::int64_t Evaluation::feasible_cost(Objective o) const {
  return complete && memory_ok ? cost(o) : TimingModel::kInfeasible;
}

std::int64_t lower_bound(const Problem& problem) {
  const std::int32_t p = problem.stages, m = problem.microbatches;
  std::int64_t best = 0;
  for (std::int32_t d = 0; d < p; ++d) {
    const auto du = static_cast<std::size_t>(d);
    // Before the first B of device d only F's can run (a W needs its B), at most k of them within
    // the memory limit; the first B cannot start before F_d plus the round trip through the later
    // stages.
    std::int64_t gap = problem.forward_ps[du];
    for (std::int32_t s = d + 1; s < p; ++s) {
      const auto su = static_cast<std::size_t>(s);
      gap += problem.forward_ps[su] + problem.backward_ps[su] + 2 * problem.comm_ps;
    }
    std::int64_t k = m;
    if (problem.activation_bytes[du] > 0) k = std::min<std::int64_t>(k, problem.limit_bytes[du] / problem.activation_bytes[du]);
    const std::int64_t idle = std::max<std::int64_t>(0, gap - k * problem.forward_ps[du]);
    std::int64_t bound = problem.work_ps(d) + idle;
    if (problem.objective == Objective::Makespan) {
      std::int64_t offset = 0;
      for (std::int32_t s = 0; s < d; ++s) offset += problem.forward_ps[static_cast<std::size_t>(s)] + problem.comm_ps;
      bound += offset;
    }
    best = std::max(best, bound);
  }
  return best;
}

TimingModel::TimingModel(const Problem& problem) : problem_(problem) {
  const auto p = static_cast<std::size_t>(problem.stages);
  const auto n = p * static_cast<std::size_t>(problem.microbatches);
  for (auto& e : eval_.end) e.assign(n, -1);
  eval_.span.assign(p, 0);
  eval_.peak_bytes.assign(p, 0);
  position_.assign(p, 0);
  free_.assign(p, 0);
  memory_.assign(p, 0);
  queued_.assign(p, 0);
}

std::int64_t TimingModel::cost(const Order& order) {
  run(order);
  return eval_.feasible_cost(problem_.objective);
}

void TimingModel::run(const Order& order) {
  const std::int32_t p = problem_.stages, m = problem_.microbatches;
  const auto pu = static_cast<std::size_t>(p);
  eval_.complete = false;
  eval_.memory_ok = false;
  for (auto& e : eval_.end) std::fill(e.begin(), e.end(), -1);
  std::fill(position_.begin(), position_.end(), 0);
  std::fill(free_.begin(), free_.end(), 0);
  std::fill(memory_.begin(), memory_.end(), 0);
  std::fill(eval_.peak_bytes.begin(), eval_.peak_bytes.end(), 0);
  std::vector<std::int64_t> first_start(pu, -1);
  queue_.clear();
  for (std::int32_t d = 0; d < p; ++d) {
    queue_.push_back(d);
    queued_[static_cast<std::size_t>(d)] = 1;
  }
  auto& fe = eval_.end[0];
  auto& be = eval_.end[1];
  auto index = [m](std::int32_t s, std::int32_t j) { return static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j); };
  auto wake = [this, p](std::int32_t d) {
    if (d < 0 || d >= p || queued_[static_cast<std::size_t>(d)]) return;
    queued_[static_cast<std::size_t>(d)] = 1;
    queue_.push_back(d);
  };
  std::size_t head = 0;
  while (head < queue_.size()) {
    const std::int32_t d = queue_[head++];
    const auto du = static_cast<std::size_t>(d);
    queued_[du] = 0;
    const auto& ops = order[du];
    while (position_[du] < ops.size()) {
      const Step st = ops[position_[du]];
      if (st.microbatch < 0 || st.microbatch >= m) return;  // malformed: stays incomplete
      std::int64_t ready = 0;
      const std::size_t i = index(d, st.microbatch);
      if (st.kind == StepKind::F) {
        if (d > 0) {
          const std::int64_t e = fe[index(d - 1, st.microbatch)];
          if (e < 0) break;
          ready = e + problem_.comm_ps;
        }
      } else if (st.kind == StepKind::B) {
        if (fe[i] < 0) break;
        ready = fe[i];
        if (d + 1 < p) {
          const std::int64_t e = be[index(d + 1, st.microbatch)];
          if (e < 0) break;
          ready = std::max(ready, e + problem_.comm_ps);
        }
      } else {
        if (be[i] < 0) break;
        ready = be[i];
      }
      const std::int64_t start = std::max(free_[du], ready);
      const std::int64_t end = start + problem_.duration(st.kind, d);
      auto& slot = eval_.end[static_cast<int>(st.kind)][i];
      if (slot >= 0) return;  // listed twice: incomplete
      slot = end;
      if (first_start[du] < 0) first_start[du] = start;
      free_[du] = end;
      const std::int64_t delta = problem_.memory_delta(st.kind, d);
      if (delta > 0) eval_.peak_bytes[du] = std::max(eval_.peak_bytes[du], memory_[du] + delta);
      memory_[du] += delta;
      ++position_[du];
      if (st.kind == StepKind::F) wake(d + 1);
      if (st.kind == StepKind::B) wake(d - 1);
    }
  }
  eval_.complete = true;
  eval_.memory_ok = true;
  eval_.makespan = 0;
  eval_.span_max = 0;
  const auto need = 3 * static_cast<std::size_t>(m);
  for (std::size_t d = 0; d < pu; ++d) {
    if (position_[d] != order[d].size() || order[d].size() != need) eval_.complete = false;
    if (eval_.peak_bytes[d] > problem_.limit_bytes[d]) eval_.memory_ok = false;
    eval_.span[d] = first_start[d] < 0 ? 0 : free_[d] - first_start[d];
    eval_.makespan = std::max(eval_.makespan, free_[d]);
    eval_.span_max = std::max(eval_.span_max, eval_.span[d]);
  }
}

Evaluation evaluate(const Problem& problem, const Order& order) {
  TimingModel model(problem);
  model.cost(order);
  return model.last();
}

}  // namespace bubblesim::optimizer
