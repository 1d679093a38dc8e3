#include "schedules/optimizer/first_device_bound.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <vector>

#include "schedules/optimizer/relaxation_search.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {
namespace {

using relaxation::Device;
using relaxation::Search;

constexpr std::int64_t kMaxSteps = 1000;

/// The common step of every F, B and W duration and delay, and of the R, O and L durations of the
/// stages [0, stages); 0 when there is none.
std::int64_t common_step(const Problem& pr, std::int32_t stages) {
  std::int64_t g = 0;
  auto gcd = [&g](std::int64_t v) { g = std::gcd(g, std::max<std::int64_t>(0, v)); };
  for (std::int32_t s = 0; s < pr.stages; ++s) {
    for (StepKind k : {StepKind::F, StepKind::B, StepKind::W}) gcd(pr.duration(k, s));
    if (s + 1 < pr.stages) {
      gcd(pr.forward_delay(s));
      gcd(pr.backward_delay(s));
    }
  }
  for (std::int32_t s = 0; s < stages; ++s) {
    if (pr.memory_ops.allow_recompute) gcd(pr.duration(StepKind::R, s));
    if (pr.memory_ops.allow_offload) {
      gcd(pr.duration(StepKind::O, s));
      gcd(pr.duration(StepKind::L, s));
    }
  }
  return g;
}

/// Stage s's device (straight placement) in steps of `g`; false where the search's rule for
/// reloads is not exact (a reload slower than the B: two reloads could overlap).
bool make_device(const Problem& pr, std::int32_t stage, std::int64_t g, Device& d) {
  const auto su = static_cast<std::size_t>(stage);
  d.m = pr.microbatches;
  d.tf = pr.duration(StepKind::F, stage) / g;
  d.tb = pr.duration(StepKind::B, stage) / g;
  d.tw = pr.duration(StepKind::W, stage) / g;
  d.offload = pr.memory_ops.allow_offload;
  d.recompute = pr.memory_ops.allow_recompute;
  if (d.recompute) d.tr = pr.duration(StepKind::R, stage) / g;
  if (d.offload) {
    d.to = pr.duration(StepKind::O, stage) / g;
    d.tl = pr.duration(StepKind::L, stage) / g;
    if (d.tl > d.tb) return false;
  }
  std::int64_t rt = pr.forward_ps[su];
  for (std::int32_t s = stage + 1; s < pr.stages; ++s) {
    const auto t = static_cast<std::size_t>(s);
    rt += pr.forward_delay(s - 1) + pr.forward_ps[t] + pr.backward_ps[t] + pr.backward_delay(s - 1);
  }
  d.round_trip = rt / g;
  d.memory.mb = pr.memory.activation_bytes[su];
  d.memory.mw = pr.memory.weight_grad_bytes[su];
  d.memory.in = pr.memory_ops.stage_input_bytes.empty() ? 0 : pr.memory_ops.stage_input_bytes[su];
  d.memory.limit = pr.memory.limit_bytes[su];
  return true;
}

bool applies(const Problem& pr) {
  return pr.placement == PlacementKind::Straight && pr.objective != Objective::Iteration &&
         pr.memory_ops_allowed() && pr.microbatches > 0;
}

/// Tries targets from `target` (steps) upward with `feasible(target, nodes)`; returns the largest
/// target certified impossible plus one (no schedule ends before it), in steps.
std::int64_t certify(std::int64_t target, std::int64_t cap, std::int64_t node_limit, bool* exact,
                     const std::function<bool(std::int64_t, std::int64_t&, bool&)>& feasible) {
  std::int64_t certified = target;  // no schedule of the relaxation ends before `certified`
  std::int64_t nodes = 0;
  for (; target <= cap && nodes < node_limit; ++target) {
    bool exhausted = false;
    if (feasible(target, nodes, exhausted)) {
      if (exact != nullptr) *exact = true;
      break;
    }
    if (exhausted) break;
    certified = target + 1;  // the search saw every schedule: none ends by `target`
  }
  return certified;
}

/// The relaxation of devices [0, k) together: for every schedule of device s that meets the
/// target, the schedules of device s + 1 under the times it sets.
/// The relaxation of devices [0, k) together: for every schedule of device s that meets the
/// target, the schedules of device s + 1 under the times it sets. With every device (k = p) a
/// chain is also a candidate schedule, replayed by the timing model.
class Chain {
 public:
  Chain(const Problem& pr, std::int32_t k, std::int64_t g, std::int64_t node_limit,
        Clock::time_point deadline)
      : device(static_cast<std::size_t>(k)),
        pr_(pr),
        grid_(g),
        limit_(node_limit),
        deadline_(deadline) {}

  /// Is there a chain of schedules whose spans (or, with the makespan, ends) are within `target`?
  /// With every device, enumerates the chains until one replays within the target (`order`).
  bool feasible(std::int64_t target, std::int64_t& nodes) {
    target_ = target;
    exhausted_ = relaxed_ = false;
    return solve(0, nullptr, nodes) || relaxed_;
  }
  bool exhausted() const { return exhausted_; }

  std::vector<Device> device;
  std::optional<Order> order;  // the first chain that the timing model replays within the target

 private:
  bool solve(std::int32_t s, const Search* before, std::int64_t& nodes) {
    const auto su = static_cast<std::size_t>(s);
    Device d = device[su];
    std::int64_t first = 0;  // when the device's first op, F(s, 0), starts
    if (before != nullptr) {
      // F(s, j)'s input arrives when F(s - 1, j) ends; B(s, j) ends by B(s - 1, j)'s start, exactly
      // then when that B waited for it (with the boundary's delays).
      const std::int64_t fd = pr_.forward_delay(s - 1) / grid_;
      const std::int64_t bd = pr_.backward_delay(s - 1) / grid_;
      const auto m = static_cast<std::size_t>(d.m);
      d.inputs.ready_f.resize(m);
      d.inputs.deadline_b.resize(m);
      d.inputs.exact_b.resize(m);
      for (std::int64_t j = 0; j < d.m; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        d.inputs.ready_f[ju] = before->start_f(j) + device[su - 1].tf + fd;
        d.inputs.deadline_b[ju] = before->start_b(j) - bd;
        d.inputs.exact_b[ju] = before->waited_b(j) ? 1 : 0;
      }
      first = d.inputs.ready_f[0];
    }
    std::function<bool(const Search&)> leaf;
    if (su + 1 < device.size()) {
      leaf = [this, s, &nodes](const Search& me) {
        chain_.push_back(&me);
        const bool found = solve(s + 1, &me, nodes);
        chain_.pop_back();
        return found;
      };
    } else if (static_cast<std::int32_t>(device.size()) == pr_.devices) {
      leaf = [this](const Search& me) {
        chain_.push_back(&me);
        const bool real = replays();
        chain_.pop_back();
        relaxed_ = true;
        return real;
      };
    }
    // The device's span starts with its first op, F(s, 0), when its input arrives.
    const bool span = pr_.objective == Objective::StageSpan;
    Search search(d, (span ? first : 0) + target_, limit_, nodes, leaf, deadline_);
    const bool found = search.feasible();
    exhausted_ = exhausted_ || search.exhausted();
    return found;
  }

  /// Whether the chain on the stack, listed per device, replays within the target.
  bool replays() {
    Order o(chain_.size());
    for (std::size_t s = 0; s < chain_.size(); ++s)
      o[s] = chain_[s]->list(static_cast<std::int32_t>(s));
    if (TimingModel(pr_).cost(o) > target_ * grid_) return false;
    order = std::move(o);
    return true;
  }

  const Problem& pr_;
  std::int64_t grid_, limit_, target_ = 0;
  Clock::time_point deadline_;
  std::vector<const Search*> chain_;  // the devices' searches of the current chain
  bool exhausted_ = false, relaxed_ = false;
};

/// The plan of a listed order: each activation's choice, and each reload's lead (F, B and W ops
/// from the last one listed before it to its B; materialize lists it there).
MemoryPlan plan_of(const Problem& pr, const Order& order) {
  MemoryPlan plan = MemoryPlan::keep_all(pr);
  for (const auto& ops : order) {
    std::int32_t rank = -1;  // of the last F, B or W listed
    std::vector<std::int32_t> reload_after(pr.activations(), -1);
    for (const Step& st : ops) {
      const std::size_t a = pr.index(st.stage, st.microbatch);
      if (st.kind == StepKind::R) plan.choice[a] = ActivationChoice::Recomputed;
      if (st.kind == StepKind::O) plan.choice[a] = ActivationChoice::Offloaded;
      if (st.kind == StepKind::L) reload_after[a] = rank;
      if (is_copy(st.kind) || st.kind == StepKind::R) continue;
      ++rank;
      if (st.kind == StepKind::B && reload_after[a] >= 0)
        plan.reload_lead[a] = std::max(1, rank - reload_after[a]);
    }
  }
  return plan;
}

}  // namespace

std::int64_t first_device_bound(const Problem& pr, std::int64_t from, std::int64_t node_limit,
                                bool* exact, Clock::time_point deadline) {
  if (exact != nullptr) *exact = false;
  if (!applies(pr)) return 0;
  const std::int64_t g = common_step(pr, 1);
  Device d;
  if (g <= 0 || !make_device(pr, 0, g, d)) return 0;
  // Device 0 runs all its work: no target below it is possible.
  const std::int64_t target = std::max((from + g - 1) / g, d.m * (d.tf + d.tb + d.tw));
  // Each search node costs a pass over the steps: only on a coarse grid.
  if (target > kMaxSteps) return 0;
  // A target far beyond the work would only mean the search is not worth its time.
  const std::int64_t cap = 4 * d.m * (d.tf + d.tb + d.tw + d.tr) + d.round_trip + 8;
  return g * certify(target, cap, node_limit, exact,
                     [&](std::int64_t t, std::int64_t& nodes, bool& exhausted) {
                       Search search(d, t, node_limit, nodes, nullptr, deadline);
                       const bool found = search.feasible();
                       exhausted = search.exhausted();
                       return found;
                     });
}

ChainOutcome chain_bound(const Problem& pr, std::int32_t devices, std::int64_t from,
                         std::int64_t node_limit, Clock::time_point deadline) {
  ChainOutcome out;
  if (!applies(pr) || devices < 1 || devices > pr.devices) return out;
  const std::int64_t g = common_step(pr, devices);
  if (g <= 0) return out;
  Chain chain(pr, devices, g, node_limit, deadline);
  std::int64_t target = (from + g - 1) / g;
  for (std::int32_t s = 0; s < devices; ++s) {
    Device& d = chain.device[static_cast<std::size_t>(s)];
    if (!make_device(pr, s, g, d)) return out;
    d.last = s + 1 == pr.stages;
    target = std::max(target, d.m * (d.tf + d.tb + d.tw));
  }
  if (target > kMaxSteps) return out;
  const Device& d0 = chain.device.front();
  const std::int64_t cap = 4 * d0.m * (d0.tf + d0.tb + d0.tw + d0.tr) + d0.round_trip + 8;
  out.bound = g * certify(target, cap, node_limit, &out.exact,
                          [&](std::int64_t t, std::int64_t& nodes, bool& exhausted) {
                            const bool found = chain.feasible(t, nodes);
                            exhausted = chain.exhausted();
                            return found;
                          });
  if (chain.order) {
    out.plan = plan_of(pr, *chain.order);
    out.order = std::move(chain.order);
  }
  return out;
}

}  // namespace bubblesim::optimizer
