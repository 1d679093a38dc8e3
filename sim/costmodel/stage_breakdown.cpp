// StageBreakdown::cost(): a stage's parts summed into the StageCost the engine replays.
#include <cmath>

#include "sim/costmodel/model_costs.h"

namespace bubblesim {

StageCost StageBreakdown::cost() const {
  StageCost c;
  c.forward = forward.total();
  c.backward_input = backward_input.total();
  c.backward_weight = backward_weight.total();
  c.recompute = recompute.total();
  c.fused = Time::zero();
  c.activation = memory.activation;
  c.weight_grad = memory.weight_grad;
  c.stage_input = memory.stage_input;
  c.backward_recompute = {Time::from_seconds(backward_input.recompute), memory.recompute_units,
                          memory.recompute_unit, memory.not_stored};
  c.p2p = p2p;
  c.static_memory = memory.static_memory;
  c.moe.a2a_forward = Time::from_seconds(a2a.forward);
  c.moe.a2a_backward = Time::from_seconds(a2a.backward);
  c.moe.a2a_forward_exposed = Time::from_seconds(forward.a2a);
  c.moe.a2a_backward_exposed = Time::from_seconds(backward_input.a2a);
  c.moe.a2a_sm.forward_slowdown = Time::from_seconds(forward.a2a_sm);
  c.moe.a2a_sm.backward_slowdown = Time::from_seconds(backward_input.a2a_sm);
  c.moe.a2a_bytes = Bytes(static_cast<std::int64_t>(std::llround(a2a.bytes)));
  c.moe.a2a_count_forward = a2a.count_forward;
  c.moe.a2a_count_backward = a2a.count_backward;
  c.moe.experts = experts;
  c.moe.expert_static = memory.expert_static;
  c.moe.expert_activation = memory.expert_activation;
  return c;
}

}  // namespace bubblesim
