#include "sim/costmodel/component_timer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/costmodel/op_timing.h"

namespace bubblesim {

ComponentTimer::ComponentTimer(const ModelCostInputs& in, const ComponentWork& layer) : in_(in) {
  element_bytes_ = static_cast<double>(in.model.dtype.bytes);
  slowest_gpu_ = slowest_gpu_factor(in.gpu, in.gpus);
  if (!in.per_layer || in.gpu.efficiency.explicit_given) return;
  const double peak = in.gpu.flops.flops_per_second();
  if (!(peak > 0)) throw std::invalid_argument("the GPU's peak FLOP rate must be positive");
  const MeasuredLayer& ml = *in.per_layer;
  measured_ = true;
  auto eff = [&](double flops, Time t) {
    return t > Time::zero() ? flops / (peak * t.seconds()) : 0.0;
  };
  f_eff_ = eff(layer.forward.flops(), ml.forward);
  b_eff_ = eff(layer.backward_input.flops(), ml.backward_input);
  w_eff_ = eff(layer.backward_weight.flops(), ml.backward_weight);
  gemm_eff_ = w_eff_ > 0 ? w_eff_
                         : eff(layer.forward.flops() + layer.backward_input.flops(),
                               ml.forward + ml.backward_input);
  if (!(gemm_eff_ > 0)) {
    throw std::invalid_argument("costs.per_layer needs a positive forward or backward time");
  }
  if (in.gpu.memory_bandwidth) bandwidth_ = in.gpu.memory_bandwidth->bytes_per_second();
}

double ComponentTimer::seconds(const PassWork& w, bool backward, bool weight_pass) const {
  if (!measured_) {
    const Fp8Gemms fp8 = !in_.model.fp8_linear                       ? Fp8Gemms::Off
                         : weight_pass || in_.model.dtype.bytes == 1 ? Fp8Gemms::On
                                                                     : Fp8Gemms::OnWithCasts;
    const PassTime t =
        pass_time(w, in_.gpu, element_bytes_, backward, fp8, in_.model.kernels.attention_backend);
    // The slowest chip's compute (first_principles.slowest_gpu); its memory traffic is not
    // slower (the measured spread is of the sustained GEMM rate).
    return t.total() + (slowest_gpu_ - 1.0) * (t.gemm_s + t.attention_s);
  }
  const double peak = in_.gpu.flops.flops_per_second();
  double s = w.flops() / (peak * gemm_eff_);
  if (bandwidth_ > 0) s += w.memory_bytes() / (bandwidth_ * in_.gpu.efficiency.memory);
  return s;
}

double ComponentTimer::launch_bound(const PassWork& w, double gpu_s) const {
  const double host = in_.model.kernels.host_launch_s;
  if (measured_ || !(host > 0)) return gpu_s;
  return std::max(gpu_s, w.launches() * host);
}

std::string ComponentTimer::note() const {
  if (!measured_) return "";
  return fmt::format(
      "costs.per_layer shows {:.3f} (F), {:.3f} (B), {:.3f} (W) of peak; embedding and LM head "
      "GEMMs timed at {:.3f}, their memory-bound work at {}",
      f_eff_, b_eff_, w_eff_, gemm_eff_,
      bandwidth_ > 0 ? fmt::format("{:g} x {}", in_.gpu.efficiency.memory,
                                   to_string(*in_.gpu.memory_bandwidth))
                     : std::string("no cost (no memory bandwidth given)"));
}

}  // namespace bubblesim
