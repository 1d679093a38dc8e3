#include "schedules/a2a_exposure.h"

#include <algorithm>

namespace bubblesim {

namespace {

const StageCost& cost_of(const std::vector<StageCost>& costs, std::int32_t s) {
  static const StageCost none;
  return s >= 0 && static_cast<std::size_t>(s) < costs.size() ? costs[static_cast<std::size_t>(s)]
                                                              : none;
}

}  // namespace

bool backward_split(const Op& op, const TableIndex& index) {
  switch (op.kind) {
    case OpKind::Backward:
      return index.has_weight(op.stage, op.microbatch);
    case OpKind::ForwardBackward:
      return index.has_weight(op.backward_stage, op.backward_microbatch);
    default:
      return false;
  }
}

A2aOverlap op_a2a(const Op& op, const std::vector<StageCost>& costs, bool split) {
  auto alone = [](Time a2a, Time exposed, Time slowdown) {
    return A2aOverlap{a2a - exposed, exposed, slowdown};
  };
  const StageCost& c = cost_of(costs, op.stage);
  switch (op.kind) {
    case OpKind::Forward:
      return alone(c.moe.a2a_forward, c.moe.a2a_forward_exposed, c.moe.a2a_sm.forward_slowdown);
    case OpKind::Recompute:
      return alone(c.moe.a2a_forward, c.moe.a2a_forward_exposed, Time::zero());
    case OpKind::Backward:
      return alone(c.moe.a2a_backward, c.moe.a2a_backward_exposed, c.moe.a2a_sm.backward_slowdown);
    case OpKind::ForwardBackward: {
      const StageCost& b = cost_of(costs, op.backward_stage);
      if (c.fused > Time::zero()) return {};  // the scenario gave the fused op's time
      return fused_a2a(c, b, split ? b.backward_input : b.full_backward());
    }
    default:
      return {};
  }
}

OpExperts op_experts(const Op& op, const std::vector<StageCost>& costs, bool split) {
  OpExperts out;
  auto add = [&](std::int32_t s, Time StageCost::Experts::*pass) {
    const StageCost& c = cost_of(costs, s);
    out.load += c.moe.experts.load.*pass;
    out.uniform += c.moe.experts.uniform.*pass;
  };
  auto add_backward = [&](std::int32_t s) {
    add(s, &StageCost::Experts::backward_input);
    if (!split) add(s, &StageCost::Experts::backward_weight);
  };
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Recompute:
      add(op.stage, &StageCost::Experts::forward);
      break;
    case OpKind::Backward:
      add_backward(op.stage);
      break;
    case OpKind::Weight:
      add(op.stage, &StageCost::Experts::backward_weight);
      break;
    case OpKind::ForwardBackward:
      add(op.stage, &StageCost::Experts::forward);
      add_backward(op.backward_stage);
      break;
    default:
      break;
  }
  return out;
}

std::vector<A2aTime> a2a_per_device(const Table& table, const std::vector<StageCost>& costs) {
  std::vector<A2aTime> out(static_cast<std::size_t>(table.devices));
  // Without an all-to-all every device's times are zero: no table index (it is as large as the
  // table).
  const bool any = std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward > Time::zero() || c.moe.a2a_backward > Time::zero();
  });
  if (!any) return out;
  const TableIndex index(table);
  for (std::size_t d = 0; d < table.device_ops.size() && d < out.size(); ++d) {
    A2aTime& a = out[d];
    for (const Op& op : table.device_ops[d]) {
      const StageCost& c = cost_of(costs, op.stage);
      switch (op.kind) {
        case OpKind::Forward:
        case OpKind::Recompute:
          a.total += c.moe.a2a_forward;
          break;
        case OpKind::Backward:
          a.total += c.moe.a2a_backward;
          break;
        case OpKind::ForwardBackward:
          a.total += c.moe.a2a_forward + cost_of(costs, op.backward_stage).moe.a2a_backward;
          break;
        default:
          continue;
      }
      const A2aOverlap o = op_a2a(op, costs, backward_split(op, index));
      a.exposed += o.exposed;
      a.slowdown += o.slowdown;
    }
  }
  return out;
}

}  // namespace bubblesim
