#pragma once
// Internal to the cost model: times a component's passes (layer_work.h) on the GPU for
// model_costs.cpp, by op_timing.h's efficiency model or, with `costs.per_layer`, at the
// efficiency the measured layer shows.

#include <string>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_costs.h"

namespace bubblesim {

/// Seconds of each pass of one component.
struct PassSeconds {
  double forward = 0, backward_input = 0, backward_weight = 0, selective_recompute = 0,
         op_recompute = 0;
};

/// Times components on the GPU; with `costs.per_layer` and no explicit efficiency, GEMMs run at
/// the efficiency the measured layer's W shows (W is weight-gradient GEMMs only, of the same
/// sizes as F's and B's linear layers) and memory-bound work at the HBM bandwidth.
class ComponentTimer {
 public:
  /// `layer`: the model's transformer layer, whose work the measured layer's times divide.
  /// Throws std::invalid_argument for a GPU without a positive peak or a measured layer without
  /// a positive F or B time.
  ComponentTimer(const ModelCostInputs& in, const ComponentWork& layer);

  /// Seconds of `w`; `backward` picks the attention kernels' backward efficiency. `weight_pass`:
  /// W's FP8 operands were cast in F and B (no casts of its own); an fp8 `dtype` has nothing to
  /// cast.
  double seconds(const PassWork& w, bool backward, bool weight_pass = false) const;

  /// Seconds of each pass of a whole component, each at least its kernel launches x the
  /// framework's host_launch (the GPU waits for the host to issue short kernels; not with a
  /// measured layer, whose times hold whatever the host cost).
  PassSeconds of(const ComponentWork& c) const {
    return {launch_bound(c.forward, seconds(c.forward, false)),
            launch_bound(c.backward_input, seconds(c.backward_input, true)),
            launch_bound(c.backward_weight, seconds(c.backward_weight, true, true)),
            launch_bound(c.selective_recompute, seconds(c.selective_recompute, false)),
            launch_bound(c.op.recompute, seconds(c.op.recompute, false))};
  }

  /// `gpu_s`, or the host's time to launch `w`'s kernels when that is longer.
  double launch_bound(const PassWork& w, double gpu_s) const;

  /// What the measured layer shows, for the report; "" without `costs.per_layer`.
  std::string note() const;

 private:
  const ModelCostInputs& in_;
  double element_bytes_ = 2;
  double slowest_gpu_ = 1;  // slowest_gpu_factor of the step's GPUs (a quadrature: once)
  bool measured_ = false;
  double f_eff_ = 0, b_eff_ = 0, w_eff_ = 0, gemm_eff_ = 0, bandwidth_ = 0;
};

}  // namespace bubblesim
