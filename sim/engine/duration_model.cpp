#include "sim/engine/duration_model.h"

#include <fmt/format.h>

#include <cmath>

namespace bubblesim {

Time scaled(Time t, double factor) {
  const double ps = std::round(static_cast<double>(t.ps()) * factor);
  if (!std::isfinite(ps) || ps >= 9.2e18 || ps < 0.0) {
    throw OverflowError(
        fmt::format("{} slowed down by {} does not fit in 64-bit picoseconds", t, factor));
  }
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

Time CostDurations::of(const OpIndex& index, const std::vector<StageCost>& costs, const Op& op) {
  auto cost = [&](std::int32_t s) -> const StageCost& {
    return costs[static_cast<std::size_t>(s)];
  };
  auto backward = [&](std::int32_t s, std::int32_t j) {
    return index.has(OpKind::Weight, s, j) ? cost(s).backward_input : cost(s).full_backward();
  };
  switch (op.kind) {
    case OpKind::Forward:
      return cost(op.stage).forward;
    case OpKind::Backward:
      return backward(op.stage, op.microbatch);
    case OpKind::Weight:
      return cost(op.stage).backward_weight;
    case OpKind::Recompute: {
      const StageCost& c = cost(op.stage);
      return c.recompute > Time::zero() ? c.recompute : c.forward;
    }
    case OpKind::ForwardBackward: {
      const StageCost& c = cost(op.stage);
      if (c.fused > Time::zero()) return c.fused;
      return fused_forward_backward(c, cost(op.backward_stage),
                                    backward(op.backward_stage, op.backward_microbatch));
    }
    case OpKind::Offload:
    case OpKind::Reload:
      return Time::zero();
  }
  return Time::zero();
}

void CostDurations::fill(const OpIndex& index, const std::vector<StageCost>& costs,
                         std::int32_t /*iteration*/, std::vector<Time>& out) const {
  out.resize(index.size());
  for (std::int32_t d = 0; d < index.devices(); ++d) {
    for (std::uint32_t n = index.device_begin(d); n < index.device_end(d); ++n)
      out[n] = on(index, costs, index.op(d, n), d);
  }
}

}  // namespace bubblesim
