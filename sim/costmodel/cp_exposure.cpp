#include "sim/costmodel/cp_exposure.h"

#include <algorithm>

namespace bubblesim {

CpExposure cp_exposure(const ModelCostInputs& in, const ComponentWork& layer,
                       const ComponentTimer& timer, std::int32_t stage) {
  const ComponentComm& c = layer.comm;
  if (!in.collectives || c.cp_steps <= 0) return {};
  const double cp = static_cast<double>(in.sharding.cp), steps = c.cp_steps;
  auto attention_s = [&](const PassWork& w, bool backward) {  // the layer's attention kernels
    PassWork a;
    a.attention_flops = w.attention_flops;
    a.attention_head_dim = w.attention_head_dim;
    a.attention_key_len = w.attention_key_len;
    return timer.seconds(a, backward);
  };
  const double block_f = attention_s(layer.forward, false) / cp;
  const double block_b = attention_s(layer.backward_input, true) / cp;
  auto step = [&](double bytes) {
    return in.collectives->context_parallel_step(stage, bytes).seconds();
  };
  const double kv = step(c.cp_kv_bytes);
  const bool overlap = in.sharding.cp_exchange.overlap;
  if (in.sharding.cp_exchange.algorithm == CpAlgorithm::Ring) {
    const double kv_dkv = step(2.0 * c.cp_kv_bytes);
    if (!overlap) return {steps * kv, steps * kv_dkv + kv};
    return {steps * std::max(0.0, kv - block_f), steps * std::max(0.0, kv_dkv - block_b) + kv};
  }
  const double gather = steps * kv;  // an all-gather of cp blocks: cp - 1 ring steps
  if (!overlap) return {gather, 2.0 * gather};
  const double e = static_cast<double>(in.model.dtype.bytes);
  const double dkv = step(c.cp_kv_bytes * std::max(1.0, 4.0 / e));  // accumulated in fp32
  return {std::max(0.0, gather - block_f),
          std::max(0.0, gather - block_b) + steps * std::max(0.0, dkv - block_b) + dkv};
}

}  // namespace bubblesim
