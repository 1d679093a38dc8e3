#pragma once
// VariabilitySpec: how op times vary from one iteration to the next (a scenario's `variability:`
// section, docs/variability.md). Each op's duration is its deterministic time (stage costs times a
// straggler's slowdown) times a factor with mean 1 and coefficient of variation `cv`, drawn from
// `distribution`; `per` and the correlations say which ops share a draw or are correlated. A Monte
// Carlo run replays the schedule `samples` times, sample i seeded from (seed, i).

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace bubblesim {

/// What a coefficient of variation applies to: the `cv` keys F, B, W, copies, transfers. A
/// recompute R varies like a forward; an op made of several costs (a full backward B+W, a fused
/// F&B) takes their cost-weighted cv.
enum class JitterKind : std::uint8_t { Forward, Backward, Weight, Copy, Transfer };
inline constexpr int kJitterKinds = 5;
using CvByKind = std::array<double, kJitterKinds>;

/// The distribution of every factor: mean 1, coefficient of variation cv, never negative.
enum class JitterDistribution : std::uint8_t { Normal, Lognormal, Gamma };

/// Which ops share one draw within a sample: each op its own, all ops of one kind on a device
/// (F, B, W, R, O, L, F&B and the device's outgoing transfers: one draw each), or all ops of a
/// device.
enum class JitterUnit : std::uint8_t { Op, OpKind, Device };

struct VariabilitySpec {
  CvByKind cv{};  // the scenario's cv: one value for every kind, or per kind
  /// Per pipeline stage (p-way split) when a measured profile gave them; a stage's F, B and W cv
  /// replace cv's there (copies and transfers keep cv's). Empty: cv on every stage.
  std::vector<CvByKind> stage_cv;
  JitterDistribution distribution = JitterDistribution::Lognormal;
  JitterUnit per = JitterUnit::Op;
  /// Latent (Gaussian copula) correlation of two draws on the same device and on two devices;
  /// 0 <= across_devices <= within_device <= 1.
  double within_device = 0.0;
  double across_devices = 0.0;
  /// With per: device, how many GPUs one simulated device stands for (`slowest_of: group`: its
  /// TP ranks x data-parallel replicas): its draw is the slowest of that many independent ones,
  /// since a TP group runs at its slowest rank's pace and the synchronous step waits for the
  /// slowest replica. 1: the device's own draw.
  std::int32_t gpus_per_device = 1;
  std::int64_t samples = 200;
  std::uint64_t seed = 1;

  /// The cv of `kind` on pipeline stage `stage`.
  double cv_of(JitterKind kind, std::int32_t stage) const;
  /// True when every cv is zero: every sample is the deterministic replay.
  bool noiseless() const;
};

std::string_view jitter_distribution_name(JitterDistribution d);  // "normal", ...
std::string_view jitter_unit_name(JitterUnit u);                  // "op", "op-kind", "device"
std::string_view jitter_kind_key(JitterKind k);                   // "F", "B", "W", "copies", ...
std::optional<JitterDistribution> jitter_distribution_from_name(std::string_view name);
std::optional<JitterUnit> jitter_unit_from_name(std::string_view name);

}  // namespace bubblesim
