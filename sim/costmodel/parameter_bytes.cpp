// What a parameter costs in bytes: its static memory under ZeRO (weights, gradients and the
// optimizer's state), what Megatron's optimizer step reads and writes per parameter, and the ZeRO
// group of expert parameters. Declared in model_costs.h.
#include <algorithm>

#include "sim/costmodel/model_costs.h"

namespace bubblesim {

double static_bytes_per_parameter(std::int64_t dtype_bytes, const ZeroSpec& zero) {
  const double dp = static_cast<double>(std::max<std::int64_t>(zero.dp, 1));
  const double weights = static_cast<double>(dtype_bytes);
  const double grads = 4.0;
  const double optimizer = dtype_bytes >= 4 ? 8.0 : 12.0;  // fp32 weights are the master copy
  return (zero.level >= 3 ? weights / dp : weights) + (zero.level >= 2 ? grads / dp : grads) +
         (zero.level >= 1 ? optimizer / dp : optimizer) + zero.unsharded_bytes;
}

OptimizerBytes megatron_optimizer_bytes(std::int64_t dtype_bytes, double gradient_bytes,
                                        bool loss_scaling) {
  const double e = static_cast<double>(dtype_bytes), g = gradient_bytes;
  OptimizerBytes b;
  // Every parameter of the GPU: the gradient buffer zeroed for the next iteration
  // (zero_grad_buffer: write g).
  b.per_parameter = g;
  // The shard the GPU updates (all of it without ZeRO): the gradient copied into the fp32 main
  // gradient (_copy_model_grads_to_main_grads: main_grad.float(), a copy reading g and writing 4
  // when the buffer is 16-bit, nothing when it is fp32 already); under fp16's loss scaling, the
  // unscale and inf/nan check (torch._amp_foreach_non_finite_check_and_unscale_: read 4, write
  // 4; bf16 has no grad scaler); the gradient norm for clipping (amp_C multi_tensor_l2norm: read
  // 4); Adam (apex FusedAdam, multi_tensor_adam: read the fp32 parameter, gradient and both
  // moments, write the parameter and moments: 16 + 12); the fp32 master copied back to the
  // 16-bit model parameter (_copy_main_params_to_model_params: read 4, write e).
  const double copy = g < 4.0 ? g + 4.0 : 0.0;
  b.per_shard = copy + (loss_scaling ? 8.0 : 0.0) + 4.0 + 28.0 + (4.0 + e);
  return b;
}

ZeroSpec expert_zero(const ZeroSpec& zero, const Sharding& sharding) {
  if (sharding.ep <= 1 && sharding.tp <= 1) return zero;
  return ZeroSpec{
      zero.level,
      std::max<std::int64_t>(zero.dp / std::max<std::int64_t>(sharding.ep, 1), 1) * sharding.tp};
}

}  // namespace bubblesim
