#include "schedules/optimizer/problem.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bubblesim::optimizer {

OpKind op_kind(StepKind k) {
  switch (k) {
    case StepKind::F:
      return OpKind::Forward;
    case StepKind::B:
      return OpKind::Backward;
    case StepKind::W:
      return OpKind::Weight;
    case StepKind::R:
      return OpKind::Recompute;
    case StepKind::O:
      return OpKind::Offload;
    case StepKind::L:
      return OpKind::Reload;
  }
  return OpKind::Forward;
}

std::string_view objective_name(Objective o) {
  switch (o) {
    case Objective::Makespan:
      return "makespan";
    case Objective::StageSpan:
      return "stage-span";
    case Objective::Iteration:
      return "iteration";
  }
  return "stage-span";
}

std::string_view placement_name(PlacementKind k) {
  return k == PlacementKind::V ? "v" : k == PlacementKind::Interleaved ? "interleaved" : "straight";
}

void Problem::set_shape(std::int32_t p, std::int32_t m, PlacementKind kind) {
  devices = p;
  microbatches = m;
  placement = kind;
  stages = kind == PlacementKind::Straight ? p : 2 * p;
  device_of.assign(static_cast<std::size_t>(stages), 0);
  for (std::int32_t s = 0; s < stages; ++s) {
    device_of[static_cast<std::size_t>(s)] = s < p                                ? s
                                             : kind == PlacementKind::Interleaved ? s - p
                                                                                  : 2 * p - 1 - s;
  }
  comm.forward_ps.assign(static_cast<std::size_t>(std::max(0, stages - 1)), 0);
  comm.backward_ps = comm.forward_ps;
}

void Problem::set_uniform_comm(std::int64_t ps) {
  for (std::int32_t s = 0; s + 1 < stages; ++s) {
    const std::int64_t d = device(s) == device(s + 1) ? 0 : ps;
    comm.forward_ps[static_cast<std::size_t>(s)] = d;
    comm.backward_ps[static_cast<std::size_t>(s)] = d;
  }
}

namespace {

/// The upper median of non-empty `v`: its element n / 2 once sorted.
std::int64_t upper_median(std::vector<std::int64_t> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// Every element of `v` replaced by its upper median.
void set_upper_median(std::vector<std::int64_t>& v) {
  if (!v.empty()) v.assign(v.size(), upper_median(v));
}

}  // namespace

// The zero-bubble runtime's planning: update_schedule in megatron/core/pipeline_parallel/
// zb_schedules.py of sail-sg/zero-bubble-pipeline-parallelism (the medians of the ranks' profiled
// F, B, W), auto_schedule.GraphConfig's memory units (mem_f 2, mem_b -1, mem_w -1).
void Problem::plan_with_median_stage() {
  set_upper_median(forward_ps);
  set_upper_median(backward_ps);
  set_upper_median(weight_ps);
  set_upper_median(memory_ops.recompute_ps);
  set_upper_median(memory.activation_bytes);
  set_upper_median(memory_ops.stage_input_bytes);
  for (std::size_t s = 0; s < memory.weight_grad_bytes.size(); ++s)
    memory.weight_grad_bytes[s] = memory.activation_bytes[s] / 2;
  // The transfers: the upper median over the boundaries between two devices (a boundary inside
  // one device stays free).
  for (std::vector<std::int64_t>* delays : {&comm.forward_ps, &comm.backward_ps}) {
    std::vector<std::int64_t> crossing;
    for (std::int32_t s = 0; s + 1 < stages; ++s)
      if (device(s) != device(s + 1)) crossing.push_back((*delays)[static_cast<std::size_t>(s)]);
    if (crossing.empty()) continue;
    const std::int64_t median = upper_median(std::move(crossing));
    for (std::int32_t s = 0; s + 1 < stages; ++s)
      if (device(s) != device(s + 1)) (*delays)[static_cast<std::size_t>(s)] = median;
  }
}

std::vector<std::int32_t> Problem::stages_of(std::int32_t d) const {
  std::vector<std::int32_t> out;
  for (std::int32_t s = 0; s < stages; ++s)
    if (device(s) == d) out.push_back(s);
  return out;
}

std::int64_t Problem::work_ps(std::int32_t d) const {
  std::int64_t w = 0;
  for (std::int32_t s : stages_of(d)) w += stage_work_ps(s);
  return w;
}

std::int64_t Problem::iteration_tail(std::int32_t device) const {
  if (!iteration.global_barrier) return post(device);
  std::int64_t slowest = 0;
  for (std::int32_t d = 0; d < devices; ++d) slowest = std::max(slowest, post(d));
  return iteration.barrier_ps + slowest;
}

std::int64_t objective_cost(const Problem& problem, const std::vector<std::int64_t>& first_start,
                            const std::vector<std::int64_t>& last_end) {
  std::int64_t cost = 0;
  for (std::int32_t d = 0; d < problem.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const std::int64_t start = first_start[du] < 0 ? 0 : first_start[du];
    const std::int64_t span = first_start[du] < 0 ? 0 : last_end[du] - start;
    switch (problem.objective) {
      case Objective::Makespan:
        cost = std::max(cost, last_end[du]);
        break;
      case Objective::StageSpan:
        cost = std::max(cost, span);
        break;
      case Objective::Iteration:
        cost = std::max(cost, (problem.iteration.global_barrier ? last_end[du] : span) +
                                  problem.iteration_tail(d));
        break;
    }
  }
  return cost;
}

namespace {

/// The most F time device d can run with `limit` bytes and nothing freed: a fractional knapsack
/// over its stages (m forwards each), which bounds the integral one from above.
std::int64_t forward_work_within(const Problem& problem, std::int32_t d, std::int64_t limit,
                                 bool limited) {
  std::vector<std::int32_t> stages = problem.stages_of(d);
  std::int64_t all = 0;
  for (std::int32_t s : stages)
    all += problem.microbatches * problem.forward_ps[static_cast<std::size_t>(s)];
  if (!limited) return all;
  // Densest first: most forward time per byte.
  std::sort(stages.begin(), stages.end(), [&](std::int32_t a, std::int32_t b) {
    const auto au = static_cast<std::size_t>(a), bu = static_cast<std::size_t>(b);
    return static_cast<double>(problem.forward_ps[au]) *
               static_cast<double>(problem.memory.activation_bytes[bu]) >
           static_cast<double>(problem.forward_ps[bu]) *
               static_cast<double>(problem.memory.activation_bytes[au]);
  });
  double work = 0, room = static_cast<double>(std::max<std::int64_t>(0, limit));
  for (std::int32_t s : stages) {
    const auto su = static_cast<std::size_t>(s);
    const double bytes = static_cast<double>(problem.memory.activation_bytes[su]);
    const double tf = static_cast<double>(problem.forward_ps[su]);
    double n = problem.microbatches;
    if (bytes > 0) n = std::min(n, room / bytes);
    // One stage: the count is an integer (the fractional knapsack bounds several from above).
    if (stages.size() == 1) n = std::floor(n);
    work += n * tf;
    room -= n * bytes;
  }
  return std::min(all, static_cast<std::int64_t>(std::ceil(work)));
}

/// Straight placement, no offload or recompute: the device's last F, F(d, m-1), can start only
/// once enough B's and W's have freed room for it, and the first B waits `gap` after the first F
/// with at most k = L / M_B forwards run before it; from F(d, m-1) the microbatch's chain through
/// the later stages and back ends with W(d, m-1).
std::int64_t last_forward_chain(const Problem& pr, std::int32_t d, std::int64_t gap) {
  const auto du = static_cast<std::size_t>(d);
  // mw: what a kept activation holds between its B and its W (M_W under the split release).
  const std::int64_t m = pr.microbatches, mb = pr.memory.activation_bytes[du],
                     mw = pr.held_after_backward(d), limit = pr.memory.limit_bytes[du];
  const std::int64_t tf = pr.forward_ps[du], tb = pr.backward_ps[du], tw = pr.weight_ps[du];
  if (mb <= 0 || m < 2) return 0;
  const std::int64_t fit = limit / mb;  // activations the limit holds
  const std::int64_t k = std::min(m - 1, fit);
  // Fewest B and W time that leaves room for F(d, m-1): nb B's done (microbatches nb..m-1 then
  // hold activations, so nb >= m - fit; none where the limit holds all m), nw W's done.
  std::int64_t freeing = -1;
  for (std::int64_t nb = std::max<std::int64_t>(0, m - fit); nb <= m - 1; ++nb) {
    const std::int64_t room = limit - (m - nb) * mb;  // for the pending W's
    if (room < 0) continue;
    const std::int64_t pending = mw > 0 ? std::min(nb, room / mw) : nb;
    const std::int64_t t = nb * tb + (nb - pending) * tw;
    if (freeing < 0 || t < freeing) freeing = t;
  }
  if (freeing < 0) return 0;
  // Before the first B only F's: at most k of them, and the first B waits `gap`.
  const std::int64_t before =
      freeing == 0 ? (m - 1) * tf : std::max(gap + (m - 1 - k) * tf, (m - 1) * tf);
  std::int64_t chain = 0;  // F(d, m-1) start -> W(d, m-1) end
  for (std::int32_t s = d; s < pr.stages; ++s) {
    const auto su = static_cast<std::size_t>(s);
    chain += pr.forward_ps[su] + pr.backward_ps[su];
    if (s + 1 < pr.stages) chain += pr.forward_delay(s) + pr.backward_delay(s);
  }
  return before + freeing + chain + tw;
}

}  // namespace

std::int64_t lower_bound(const Problem& problem) {
  const std::int32_t S = problem.stages;
  std::int64_t best = 0;
  std::int64_t least = -1;  // the iteration objective without a barrier
  for (std::int32_t d = 0; d < problem.devices; ++d) {
    const std::vector<std::int32_t> mine = problem.stages_of(d);
    if (mine.empty()) continue;
    const std::int32_t first = mine.front(), last = mine.back();
    // Every stage runs its ops in microbatch order, so the device's first op is F(first, 0) and
    // its first B is B(last, 0): between them lies the forward chain to the last stage and the
    // backward chain back to `last`, during which the device can run only F's.
    std::int64_t gap = 0;
    for (std::int32_t s = first; s < S; ++s) {
      gap += problem.forward_ps[static_cast<std::size_t>(s)];
      if (s + 1 < S) gap += problem.forward_delay(s);
    }
    for (std::int32_t s = last + 1; s < S; ++s)
      gap += problem.backward_ps[static_cast<std::size_t>(s)];
    for (std::int32_t s = last; s + 1 < S; ++s) gap += problem.backward_delay(s);
    // Offload and recompute free memory, so the limit bounds the warm-up only without them.
    const std::int64_t forwards =
        forward_work_within(problem, d, problem.memory.limit_bytes[static_cast<std::size_t>(d)],
                            !problem.memory_ops_allowed());
    const std::int64_t idle = std::max<std::int64_t>(0, gap - forwards);
    std::int64_t bound = problem.work_ps(d) + idle;
    // The drain through a later stage t: from the device's first op F(first, 0) the forward chain
    // reaches F(t, 0); stage t then runs all its F's and B's before B(t, m-1) ends; the backward
    // chain returns to B(first, m-1), the device's last B, and its W follows.
    for (std::int32_t t = first; t < S; ++t) {
      std::int64_t chain = 0;
      for (std::int32_t s = first; s < t; ++s) {
        const auto su = static_cast<std::size_t>(s);
        chain += problem.forward_ps[su] + problem.forward_delay(s) + problem.backward_ps[su] +
                 problem.backward_delay(s);
      }
      const auto tu = static_cast<std::size_t>(t);
      chain += problem.microbatches * (problem.forward_ps[tu] + problem.backward_ps[tu]);
      chain += problem.weight_ps[static_cast<std::size_t>(first)];
      bound = std::max(bound, chain);
    }
    if (mine.size() == 1 && !problem.memory_ops_allowed())
      bound = std::max(bound, last_forward_chain(problem, d, gap));
    std::int64_t offset = 0;  // earliest start of the device's first op
    for (std::int32_t s = 0; s < first; ++s)
      offset += problem.forward_ps[static_cast<std::size_t>(s)] + problem.forward_delay(s);
    switch (problem.objective) {
      case Objective::Makespan:
        bound += offset;
        break;
      case Objective::StageSpan:
        break;
      case Objective::Iteration:
        bound +=
            problem.post(d) + (problem.iteration.global_barrier ? problem.iteration.barrier_ps : 0);
        break;
    }
    // The iteration objective is the second iteration's end minus the first's (the engine's
    // iteration time): device d starts its second iteration at t1_d, so its end is at least t1_d +
    // its span bound + its step. With a global barrier that holds for every device (the end is
    // the latest device's end + barrier + the slowest step, the same in both iterations); without
    // one only for the device that ended the first iteration last, which may be any.
    if (problem.objective == Objective::Iteration && !problem.iteration.global_barrier)
      least = least < 0 ? bound : std::min(least, bound);
    best = std::max(best, bound);
  }
  if (problem.objective == Objective::Iteration && !problem.iteration.global_barrier) return least;
  return best;
}

}  // namespace bubblesim::optimizer
