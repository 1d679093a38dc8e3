#include "sim/variability/sampled_durations.h"

#include <cmath>

#include "sim/variability/jitter_draws.h"

namespace bubblesim {
namespace {

// Draw groups beside the op kinds (0..6) for per: op-kind.
constexpr std::uint64_t kCopyGroup = 100;
constexpr std::uint64_t kTransferGroup = 101;

double weighted_cv(double cv_a, Time a, double cv_b, Time b) {
  const double ta = a.seconds(), tb = b.seconds();
  return ta + tb > 0.0 ? (cv_a * ta + cv_b * tb) / (ta + tb) : 0.0;
}

}  // namespace

SampledDurations::SampledDurations(std::shared_ptr<const VariabilitySpec> spec,
                                   std::uint64_t sample, std::shared_ptr<const DurationModel> base,
                                   std::vector<double> compute_slowdown)
    : spec_(std::move(spec)),
      seed_(sample_seed(spec_->seed, sample)),
      base_(std::move(base)),
      slowdown_(std::move(compute_slowdown)),
      global_(standard_normal(seed_, DrawStream::Global, 0)) {}

double SampledDurations::latent(std::int32_t device, std::uint64_t group, std::uint64_t index,
                                std::uint64_t sub) const {
  const VariabilitySpec& s = *spec_;
  const auto d = static_cast<std::uint64_t>(device);
  const double own_device = standard_normal(seed_, DrawStream::Device, d);
  const double a = s.across_devices;
  if (s.per == JitterUnit::Device) return std::sqrt(a) * global_ + std::sqrt(1.0 - a) * own_device;
  const double w = s.within_device;
  const double unit = s.per == JitterUnit::OpKind
                          ? standard_normal(seed_, DrawStream::OpKind, d, group)
                          : standard_normal(seed_, DrawStream::Op, group, index, sub);
  return std::sqrt(a) * global_ + std::sqrt(w - a) * own_device + std::sqrt(1.0 - w) * unit;
}

double SampledDurations::op_cv(const OpGraph& graph, const Op& op) const {
  const std::int32_t chunks = graph.table().chunks;
  auto cv = [&](JitterKind k, std::int32_t stage) { return spec_->cv_of(k, stage / chunks); };
  auto backward = [&](std::int32_t s, std::int32_t j) {
    const StageCost& c = graph.cost(s);
    if (graph.index().has_weight(s, j)) return cv(JitterKind::Backward, s);
    return weighted_cv(cv(JitterKind::Backward, s), c.backward_input, cv(JitterKind::Weight, s),
                       c.backward_weight);
  };
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Recompute:
      return cv(JitterKind::Forward, op.stage);
    case OpKind::Backward:
      return backward(op.stage, op.microbatch);
    case OpKind::Weight:
      return cv(JitterKind::Weight, op.stage);
    case OpKind::ForwardBackward: {
      const StageCost& b = graph.cost(op.backward_stage);
      const Time back = graph.index().has_weight(op.backward_stage, op.backward_microbatch)
                            ? b.backward_input
                            : b.full_backward();
      return weighted_cv(cv(JitterKind::Forward, op.stage), graph.cost(op.stage).forward,
                         backward(op.backward_stage, op.backward_microbatch), back);
    }
    case OpKind::Offload:
    case OpKind::Reload:
      return spec_->cv_of(JitterKind::Copy, 0);
  }
  return 0.0;
}

void SampledDurations::fill(const OpGraph& graph, std::vector<Time>& out) const {
  if (base_) {
    base_->fill(graph, out);
  } else {
    CostDurations(slowdown_).fill(graph, out);
  }
  for (std::uint32_t n = 0; n < graph.size(); ++n) {
    if (graph.stream(n) != 0 || out[n] == Time::zero()) continue;
    const Op& op = graph.op(n);
    const double cv = op_cv(graph, op);
    if (cv == 0.0) continue;
    const double z = latent(graph.device(n), static_cast<std::uint64_t>(op.kind), n);
    const double factor = jitter_factor(spec_->distribution, cv, z);
    if (factor != 1.0) out[n] = scaled(out[n], factor);
  }
}

bool SampledDurations::jitters_network() const {
  return spec_->cv_of(JitterKind::Transfer, 0) != 0.0 || spec_->cv_of(JitterKind::Copy, 0) != 0.0;
}

double SampledDurations::transfer_factor(std::int32_t from, std::int32_t to,
                                         std::uint32_t k) const {
  const double cv = spec_->cv_of(JitterKind::Transfer, 0);
  if (cv == 0.0) return 1.0;
  const std::uint64_t pair =
      (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint32_t>(to);
  return jitter_factor(spec_->distribution, cv, latent(from, kTransferGroup, pair, k));
}

double SampledDurations::copy_factor(std::int32_t device, std::uint32_t node) const {
  const double cv = spec_->cv_of(JitterKind::Copy, 0);
  if (cv == 0.0) return 1.0;
  return jitter_factor(spec_->distribution, cv, latent(device, kCopyGroup, node));
}

}  // namespace bubblesim
