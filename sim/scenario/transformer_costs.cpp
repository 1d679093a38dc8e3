#include "sim/scenario/transformer_costs.h"

#include <cmath>

namespace bubblesim {

TransformerLayerCosts transformer_layer_costs(const TransformerModel& m) {
  const Sharding one;
  const ComponentWork layer = transformer_layer_work(m, one);
  const ComponentWork head = lm_head_work(m, one);
  TransformerLayerCosts c;
  c.forward_flops = layer.forward.flops();
  c.backward_input_flops = layer.backward_input.flops();
  c.backward_weight_flops = layer.backward_weight.flops();
  c.activation_bytes = layer.activation_bytes;
  c.weight_grad_bytes = layer.weight_grad_bytes;
  c.hidden_state_bytes = layer.input_bytes;
  c.parameters = layer.parameters;
  c.lm_head_flops = head.forward.gemm_flops();
  c.embedding_parameters = embedding_work(m, one).parameters;
  return c;
}

std::int64_t static_bytes_per_parameter(std::int64_t dtype_bytes) {
  return std::llround(static_bytes_per_parameter(dtype_bytes, ZeroSpec{}));
}

CostProfile transformer_costs(const TransformerModel& model, const GpuSpec& gpu,
                              std::int32_t stages) {
  ModelCostInputs in;
  in.model = model;
  in.gpu = gpu;
  in.stages = stages;
  return model_costs(in).profile;
}

}  // namespace bubblesim
