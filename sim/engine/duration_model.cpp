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

Time CostDurations::of(const OpGraph& graph, const Op& op) {
  auto backward = [&](std::int32_t s, std::int32_t j) {
    return graph.index().has_weight(s, j) ? graph.cost(s).backward_input
                                          : graph.cost(s).full_backward();
  };
  switch (op.kind) {
    case OpKind::Forward:
      return graph.cost(op.stage).forward;
    case OpKind::Backward:
      return backward(op.stage, op.microbatch);
    case OpKind::Weight:
      return graph.cost(op.stage).backward_weight;
    case OpKind::Recompute: {
      const StageCost& c = graph.cost(op.stage);
      return c.recompute > Time::zero() ? c.recompute : c.forward;
    }
    case OpKind::ForwardBackward: {
      const StageCost& c = graph.cost(op.stage);
      if (c.fused > Time::zero()) return c.fused;
      return c.forward + backward(op.backward_stage, op.backward_microbatch);
    }
    case OpKind::Offload:
    case OpKind::Reload:
      return Time::zero();
  }
  return Time::zero();
}

void CostDurations::fill(const OpGraph& graph, std::vector<Time>& out) const {
  out.resize(graph.size());
  for (std::uint32_t n = 0; n < graph.size(); ++n) {
    Time t = of(graph, graph.op(n));
    const auto d = static_cast<std::size_t>(graph.device(n));
    if (graph.stream(n) == 0 && d < slowdown_.size() && slowdown_[d] != 1.0) {
      t = scaled(t, slowdown_[d]);
    }
    out[n] = t;
  }
}

}  // namespace bubblesim
