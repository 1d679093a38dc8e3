#include "schedules/a2a_exposure.h"

#include <set>
#include <utility>

namespace bubblesim {

std::vector<A2aTime> a2a_per_device(const Table& table, const std::vector<StageCost>& costs) {
  std::vector<A2aTime> out(static_cast<std::size_t>(table.devices));
  if (costs.empty()) return out;
  std::set<std::pair<std::int32_t, std::int32_t>> weights;
  for (const auto& ops : table.device_ops) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::Weight) weights.insert({op.stage, op.microbatch});
    }
  }
  static const StageCost none;
  auto cost = [&](std::int32_t s) -> const StageCost& {
    return static_cast<std::size_t>(s) < costs.size() ? costs[static_cast<std::size_t>(s)] : none;
  };
  for (std::size_t d = 0; d < table.device_ops.size() && d < out.size(); ++d) {
    A2aTime& a = out[d];
    for (const Op& op : table.device_ops[d]) {
      switch (op.kind) {
        case OpKind::Forward:
        case OpKind::Recompute:
          a.total += cost(op.stage).moe.a2a_forward;
          a.exposed += cost(op.stage).moe.a2a_forward_exposed;
          if (op.kind == OpKind::Forward) a.slowdown += cost(op.stage).moe.a2a_sm.forward_slowdown;
          break;
        case OpKind::Backward:
          a.total += cost(op.stage).moe.a2a_backward;
          a.exposed += cost(op.stage).moe.a2a_backward_exposed;
          a.slowdown += cost(op.stage).moe.a2a_sm.backward_slowdown;
          break;
        case OpKind::ForwardBackward: {
          const StageCost& f = cost(op.stage);
          const StageCost& b = cost(op.backward_stage);
          const bool split = weights.count({op.backward_stage, op.backward_microbatch}) > 0;
          a.total += f.moe.a2a_forward + b.moe.a2a_backward;
          if (f.fused == Time::zero()) {
            const A2aOverlap o = fused_a2a(f, b, split ? b.backward_input : b.full_backward());
            a.exposed += o.exposed;
            a.slowdown += o.slowdown;
          }
          break;
        }
        default:
          break;
      }
    }
  }
  return out;
}

}  // namespace bubblesim
