#include "schedules/optimizer/warm_up.h"

#include <algorithm>
#include <deque>

#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

std::optional<Order> repack_warm_up(const Problem& problem, const Order& order) {
  const std::int32_t p = problem.devices, m = problem.microbatches;
  if (problem.placement != PlacementKind::V || order.size() != static_cast<std::size_t>(p))
    return std::nullopt;
  const Evaluation ev = evaluate(problem, order);
  if (!ev.complete) return std::nullopt;
  // The order's peak in activations of a device's first stage (the largest over devices, at most
  // the 2p a device can use).
  std::int64_t peak = 0;
  for (std::int32_t d = 0; d < p; ++d) {
    const std::int64_t unit = problem.memory.activation_bytes[static_cast<std::size_t>(d)];
    if (unit > 0) peak = std::max(peak, ev.peak_bytes[static_cast<std::size_t>(d)] / unit);
  }
  peak = std::min<std::int64_t>(peak, 2 * p);
  Order out(order.size());
  for (std::int32_t d = 0; d < p; ++d) {
    const auto& ops = order[static_cast<std::size_t>(d)];
    auto& next = out[static_cast<std::size_t>(d)];
    const std::int32_t first = d;
    std::size_t cut = 0;
    while (cut < ops.size() && !(ops[cut].kind == StepKind::B && ops[cut].stage == first)) ++cut;
    std::deque<Step> f0, f1, b1, w;
    for (std::size_t i = 0; i < cut; ++i) {
      const Step& st = ops[i];
      if (st.kind == StepKind::F) {
        (st.stage == first ? f0 : f1).push_back(st);
      } else if (st.kind == StepKind::B) {
        b1.push_back(st);
      } else if (st.kind == StepKind::W) {
        w.push_back(st);
      } else {
        return std::nullopt;  // R, O, L: not a compute order
      }
    }
    const std::int64_t n1 = std::min<std::int64_t>({d + 1, peak / 2, m});
    const std::int64_t n0 = std::min<std::int64_t>(peak - n1, m);
    std::int64_t u0 = 0, u1 = 0;
    auto take = [&next](std::deque<Step>& q) {
      if (q.empty()) return false;
      next.push_back(q.front());
      q.pop_front();
      return true;
    };
    for (std::int32_t k = 0; k < 2 * (p - 1 - d); ++k)
      if (u0 < n0 && take(f0)) ++u0;
    for (std::int32_t k = 0; k <= d; ++k) {
      if (u0 < n0 && take(f0)) ++u0;
      if (u1 < n1 && take(f1)) ++u1;
    }
    while (!f0.empty() || !f1.empty() || !b1.empty() || !w.empty()) {
      take(b1);
      take(w);
      if (!take(f1)) take(f0);
    }
    next.insert(next.end(), ops.begin() + static_cast<std::ptrdiff_t>(cut), ops.end());
  }
  return out;
}

}  // namespace bubblesim::optimizer
