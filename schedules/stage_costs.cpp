#include "schedules/stage_costs.h"

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
    part.a2a_forward = c.a2a_forward / chunks;
    part.a2a_backward = c.a2a_backward / chunks;
    part.a2a_forward_exposed = c.a2a_forward_exposed / chunks;
    part.a2a_backward_exposed = c.a2a_backward_exposed / chunks;
    part.activation = c.activation / chunks;
    part.weight_grad = c.weight_grad / chunks;
    part.stage_input = c.stage_input;
    part.static_memory = c.static_memory / chunks;
    for (int k = 0; k < chunks; ++k) out.push_back(part);
  }
  return out;
}

Time fused_a2a_exposed(const StageCost& f, const StageCost& b, Time back) {
  const Time compute_f = f.forward - f.a2a_forward_exposed;
  const Time compute_b = back - b.a2a_backward_exposed;
  auto left = [](Time a2a, Time under) { return a2a > under ? a2a - under : Time::zero(); };
  return left(f.a2a_forward, compute_b) + left(b.a2a_backward, compute_f);
}

Time fused_forward_backward(const StageCost& f, const StageCost& b, Time back) {
  return (f.forward - f.a2a_forward_exposed) + (back - b.a2a_backward_exposed) +
         fused_a2a_exposed(f, b, back);
}

CostProfile CostProfile::uniform(int stages, const StageCost& cost) {
  CostProfile p;
  p.stages.assign(static_cast<std::size_t>(stages), cost);
  return p;
}

}  // namespace bubblesim
