#include "schedules/stage_costs.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bubblesim {

std::vector<StageCost> CostProfile::for_table(int chunks) const {
  if (auto it = chunked.find(chunks);
      chunks > 1 && it != chunked.end() &&
      it->second.size() == stages.size() * static_cast<std::size_t>(chunks)) {
    return it->second;
  }
  std::vector<StageCost> out;
  out.reserve(stages.size() * static_cast<std::size_t>(chunks));
  for (const StageCost& c : stages) {
    StageCost part = c;
    part.forward = c.forward / chunks;
    part.backward_input = c.backward_input / chunks;
    part.backward_weight = c.backward_weight / chunks;
    part.recompute = c.recompute / chunks;
    part.fused = c.fused / chunks;
    part.moe.a2a_forward = c.moe.a2a_forward / chunks;
    part.moe.a2a_backward = c.moe.a2a_backward / chunks;
    part.moe.a2a_forward_exposed = c.moe.a2a_forward_exposed / chunks;
    part.moe.a2a_backward_exposed = c.moe.a2a_backward_exposed / chunks;
    part.moe.a2a_sm.forward_slowdown = c.moe.a2a_sm.forward_slowdown / chunks;
    part.moe.a2a_sm.backward_slowdown = c.moe.a2a_sm.backward_slowdown / chunks;
    // Each chunk runs 1 / chunks of the all-to-alls; when they do not divide, none is counted
    // (the chunk's all-to-all then stays inside its ops' durations).
    const bool divides =
        c.moe.a2a_count_forward % chunks == 0 && c.moe.a2a_count_backward % chunks == 0;
    part.moe.a2a_count_forward = divides ? c.moe.a2a_count_forward / chunks : 0;
    part.moe.a2a_count_backward = divides ? c.moe.a2a_count_backward / chunks : 0;
    for (auto [to, from] : {std::pair{&part.moe.experts.load, &c.moe.experts.load},
                            std::pair{&part.moe.experts.uniform, &c.moe.experts.uniform}}) {
      to->forward = from->forward / chunks;
      to->backward_input = from->backward_input / chunks;
      to->backward_weight = from->backward_weight / chunks;
    }
    part.activation = c.activation / chunks;
    part.weight_grad = c.weight_grad / chunks;
    part.stage_input = c.stage_input;
    part.static_memory = c.static_memory / chunks;
    part.moe.expert_static = c.moe.expert_static / chunks;
    part.moe.expert_activation = c.moe.expert_activation / chunks;
    part.backward_recompute.time = c.backward_recompute.time / chunks;
    part.backward_recompute.unit = c.backward_recompute.unit / chunks;
    part.backward_recompute.not_stored = c.backward_recompute.not_stored / chunks;
    for (int k = 0; k < chunks; ++k) out.push_back(part);
  }
  return out;
}

A2aOverlap overlap_a2a(Time a2a, Time compute, double sm_share) {
  A2aOverlap o;
  if (a2a <= Time::zero()) return o;
  const double share = std::clamp(sm_share, 0.0, 0.99);
  // The compute, slowed for as long as the all-to-all runs, ends at compute / (1 - share).
  const Time slowed = Time::from_ps(
      static_cast<std::int64_t>(std::llround(static_cast<double>(compute.ps()) / (1.0 - share))));
  o.hidden = std::min(a2a, slowed);
  o.exposed = a2a - o.hidden;
  o.slowdown = Time::from_ps(
      static_cast<std::int64_t>(std::llround(share * static_cast<double>(o.hidden.ps()))));
  return o;
}

A2aOverlap fused_a2a(const StageCost& f, const StageCost& b, Time back) {
  const Time compute_f = f.forward - f.moe.a2a_forward_exposed - f.moe.a2a_sm.forward_slowdown;
  const Time compute_b = back - b.moe.a2a_backward_exposed - b.moe.a2a_sm.backward_slowdown;
  const A2aOverlap x = overlap_a2a(f.moe.a2a_forward, compute_b, f.moe.a2a_sm.share);
  const A2aOverlap y = overlap_a2a(b.moe.a2a_backward, compute_f, b.moe.a2a_sm.share);
  return {x.hidden + y.hidden, x.exposed + y.exposed, x.slowdown + y.slowdown};
}

Time fused_a2a_exposed(const StageCost& f, const StageCost& b, Time back) {
  return fused_a2a(f, b, back).exposed;
}

Time fused_forward_backward(const StageCost& f, const StageCost& b, Time back) {
  const A2aOverlap o = fused_a2a(f, b, back);
  return (f.forward - f.moe.a2a_forward_exposed - f.moe.a2a_sm.forward_slowdown) +
         (back - b.moe.a2a_backward_exposed - b.moe.a2a_sm.backward_slowdown) + o.exposed +
         o.slowdown;
}

CostProfile CostProfile::uniform(int stages, const StageCost& cost) {
  CostProfile p;
  p.stages.assign(static_cast<std::size_t>(stages), cost);
  return p;
}

}  // namespace bubblesim
