#pragma once
// SampledDurations: the DurationModel of one Monte Carlo sample (docs/variability.md). Every
// compute op's deterministic duration (from a base model: the stage costs and the stragglers'
// slowdown) is multiplied by a factor drawn for it; the network's transfer delays and copy times
// are stretched the same way (DurationModel::transfer_factor, copy_factor).
//
// A draw's latent standard normal mixes three independent ones: a global one G shared by every
// device, one D_d per device and one E_u per draw unit (an op, an op kind of a device, or the
// device, by VariabilitySpec::per):
//     Z = sqrt(a) G + sqrt(w - a) D_d + sqrt(1 - w) E_u,   a = across_devices, w = within_device
// so two draws on one device have latent correlation w, on two devices a. Z becomes the factor by
// jitter_factor (mean 1, the op's cv). With per: device, E_u is D_d itself (w plays no part), and
// with gpus_per_device k > 1 D_d is the largest of k independent normals.
//
// One replay at a time: the object keeps the draws of the iteration last asked for (its seed, G,
// and each D_d once drawn), so the factors of the many transfers and copies of an iteration do
// not draw D_d, k normals with slowest_of: group, again. Every value is still a pure function of
// (seed, sample, iteration, ...): the cache changes no result.

#include <memory>
#include <optional>
#include <vector>

#include "schedules/variability_settings.h"
#include "sim/engine/duration_model.h"

namespace bubblesim {

class SampledDurations final : public DurationModel {
 public:
  /// Sample `sample` of `spec` on top of `base` (null: CostDurations with `compute_slowdown`).
  SampledDurations(std::shared_ptr<const VariabilitySpec> spec, std::uint64_t sample,
                   std::shared_ptr<const DurationModel> base,
                   std::vector<double> compute_slowdown = {});

  /// Every iteration of the sample draws anew: its draws are seeded by (sample, iteration).
  void fill(const OpIndex& index, const std::vector<StageCost>& costs, std::int32_t iteration,
            std::vector<Time>& out) const override;
  bool varies_by_iteration() const override { return true; }
  bool jitters_network() const override;
  double transfer_factor(std::int32_t from, std::int32_t to, std::uint32_t producer,
                         std::uint32_t consumer, std::int32_t iteration) const override;
  double copy_factor(std::int32_t device, std::uint32_t node,
                     std::int32_t iteration) const override;

  /// The cv of one compute op of a table (its kind's, cost-weighted for B+W and F&B); `costs`
  /// per table stage.
  double op_cv(const OpIndex& index, const std::vector<StageCost>& costs, const Op& op) const;

 private:
  /// The draws of one iteration: its seed, its global normal G and the D_d drawn so far.
  struct IterationDraws {
    std::int32_t iteration = -1;
    std::uint64_t seed = 0;
    double global = 0.0;
    std::vector<std::optional<double>> device;  // D_d by device, once drawn
  };
  /// The draws of `iteration` (the cached ones when it is the iteration last asked for).
  IterationDraws& draws_of(std::int32_t iteration) const;
  /// D_d of `device` (drawn on first use): its own standard normal, or with gpus_per_device
  /// k > 1 the largest of k (the slowest GPU of the group the device stands for).
  double device_normal(IterationDraws& draws, std::int32_t device) const;
  /// The latent normal of draw unit (group, index) on `device`; group is an op kind, or one of
  /// the copy and transfer groups.
  double latent(IterationDraws& draws, std::int32_t device, std::uint64_t group,
                std::uint64_t index, std::uint64_t sub = 0) const;

  std::shared_ptr<const VariabilitySpec> spec_;
  std::uint64_t seed_;  // this sample's
  std::shared_ptr<const DurationModel> base_;
  std::vector<double> slowdown_;
  mutable IterationDraws draws_;  // of the iteration last asked for
};

}  // namespace bubblesim
