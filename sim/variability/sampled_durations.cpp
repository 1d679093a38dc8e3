#include "sim/variability/sampled_durations.h"

#include <algorithm>
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
      slowdown_(std::move(compute_slowdown)) {}

SampledDurations::IterationDraws& SampledDurations::draws_of(std::int32_t iteration) const {
  if (draws_.iteration == iteration) return draws_;
  // Iteration 0 uses the sample's seed itself; later ones a seed derived from it.
  draws_.iteration = iteration;
  draws_.seed = iteration == 0 ? seed_ : sample_seed(seed_, static_cast<std::uint64_t>(iteration));
  draws_.global = standard_normal(draws_.seed, DrawStream::Global, 0);
  draws_.device.clear();
  return draws_;
}

double SampledDurations::device_normal(IterationDraws& draws, std::int32_t device) const {
  const auto d = static_cast<std::uint64_t>(device);
  if (draws.device.size() <= d) draws.device.resize(d + 1);
  std::optional<double>& cached = draws.device[d];
  if (cached) return *cached;
  double z = standard_normal(draws.seed, DrawStream::Device, d);
  for (std::int32_t k = 1; k < spec_->gpus_per_device; ++k)
    z = std::max(z,
                 standard_normal(draws.seed, DrawStream::Device, d, static_cast<std::uint64_t>(k)));
  cached = z;
  return z;
}

double SampledDurations::latent(IterationDraws& draws, std::int32_t device, std::uint64_t group,
                                std::uint64_t index, std::uint64_t sub) const {
  const VariabilitySpec& s = *spec_;
  const auto d = static_cast<std::uint64_t>(device);
  const double own_device = device_normal(draws, device);
  const double a = s.across_devices;
  const double g = draws.global;
  if (s.per == JitterUnit::Device) return std::sqrt(a) * g + std::sqrt(1.0 - a) * own_device;
  const double w = s.within_device;
  const double unit = s.per == JitterUnit::OpKind
                          ? standard_normal(draws.seed, DrawStream::OpKind, d, group)
                          : standard_normal(draws.seed, DrawStream::Op, group, index, sub);
  return std::sqrt(a) * g + std::sqrt(w - a) * own_device + std::sqrt(1.0 - w) * unit;
}

double SampledDurations::op_cv(const OpIndex& index, const std::vector<StageCost>& costs,
                               const Op& op) const {
  const std::int32_t chunks = index.table().chunks;
  auto cv = [&](JitterKind k, std::int32_t stage) { return spec_->cv_of(k, stage / chunks); };
  auto cost = [&](std::int32_t s) -> const StageCost& {
    return costs[static_cast<std::size_t>(s)];
  };
  auto split = [&](std::int32_t s, std::int32_t j) { return index.has(OpKind::Weight, s, j); };
  auto backward = [&](std::int32_t s, std::int32_t j) {
    if (split(s, j)) return cv(JitterKind::Backward, s);
    return weighted_cv(cv(JitterKind::Backward, s), cost(s).backward_input,
                       cv(JitterKind::Weight, s), cost(s).backward_weight);
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
      const StageCost& b = cost(op.backward_stage);
      const Time back =
          split(op.backward_stage, op.backward_microbatch) ? b.backward_input : b.full_backward();
      return weighted_cv(cv(JitterKind::Forward, op.stage), cost(op.stage).forward,
                         backward(op.backward_stage, op.backward_microbatch), back);
    }
    case OpKind::Offload:
    case OpKind::Reload:
      return spec_->cv_of(JitterKind::Copy, 0);
  }
  return 0.0;
}

void SampledDurations::fill(const OpIndex& index, const std::vector<StageCost>& costs,
                            std::int32_t iteration, std::vector<Time>& out) const {
  if (base_) {
    base_->fill(index, costs, iteration, out);
  } else {
    CostDurations(slowdown_).fill(index, costs, iteration, out);
  }
  IterationDraws& draws = draws_of(iteration);
  const bool per_device = spec_->per == JitterUnit::Device;
  for (std::int32_t d = 0; d < index.devices(); ++d) {
    // per: device: one latent for all the device's ops (drawn once: it may be a max of many).
    const double device_z = per_device ? latent(draws, d, 0, 0) : 0.0;
    for (std::uint32_t n = index.device_begin(d); n < index.device_end(d); ++n) {
      const Op& op = index.op(d, n);
      if (stream_of(op.kind) != Stream::Compute || out[n] == Time::zero()) continue;
      const double cv = op_cv(index, costs, op);
      if (cv == 0.0) continue;
      const double z =
          per_device ? device_z : latent(draws, d, static_cast<std::uint64_t>(op.kind), n);
      const double factor = jitter_factor(spec_->distribution, cv, z);
      if (factor != 1.0) out[n] = scaled(out[n], factor);
    }
  }
}

bool SampledDurations::jitters_network() const {
  return spec_->cv_of(JitterKind::Transfer, 0) != 0.0 || spec_->cv_of(JitterKind::Copy, 0) != 0.0;
}

double SampledDurations::transfer_factor(std::int32_t from, std::int32_t /*to*/,
                                         std::uint32_t producer, std::uint32_t consumer,
                                         std::int32_t iteration) const {
  const double cv = spec_->cv_of(JitterKind::Transfer, 0);
  if (cv == 0.0) return 1.0;
  return jitter_factor(spec_->distribution, cv,
                       latent(draws_of(iteration), from, kTransferGroup, producer, consumer));
}

double SampledDurations::copy_factor(std::int32_t device, std::uint32_t node,
                                     std::int32_t iteration) const {
  const double cv = spec_->cv_of(JitterKind::Copy, 0);
  if (cv == 0.0) return 1.0;
  return jitter_factor(spec_->distribution, cv,
                       latent(draws_of(iteration), device, kCopyGroup, node));
}

}  // namespace bubblesim
