#include "tools/scenario/transformer_costs.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace bubblesim {
namespace {

Bytes to_bytes(double v) {
  if (!(v < 9.2e18))
    throw std::invalid_argument(fmt::format("{:g} bytes do not fit in a 64-bit count", v));
  return Bytes(static_cast<std::int64_t>(std::llround(v)));
}

}  // namespace

TransformerLayerCosts transformer_layer_costs(const TransformerModel& m) {
  const auto b = static_cast<double>(m.micro_batch_size);
  const auto s = static_cast<double>(m.seq_len);
  const auto h = static_cast<double>(m.hidden);
  const auto a = static_cast<double>(m.heads);
  const auto v = static_cast<double>(m.vocab);
  const auto dtype = static_cast<double>(m.dtype_bytes);
  const double activation_scale = dtype / 2.0;  // the published formulas assume 16-bit activations
  TransformerLayerCosts c;
  c.forward_flops = b * s * h * (24.0 * h + 4.0 * s);
  c.backward_input_flops = b * s * h * (24.0 * h + 8.0 * s);
  c.backward_weight_flops = 24.0 * b * s * h * h;
  c.activation_bytes = s * b * (34.0 * h + 5.0 * a * s) * activation_scale;
  c.weight_grad_bytes = 32.0 * s * b * h * activation_scale;
  c.hidden_state_bytes = s * b * h * dtype;
  c.parameters = 12.0 * h * h + 13.0 * h;
  c.lm_head_flops = 2.0 * b * s * h * v;
  c.embedding_parameters = v * h;
  return c;
}

std::vector<std::int64_t> split_layers(std::int64_t layers, std::int32_t stages) {
  if (stages <= 0) throw std::invalid_argument("the pipeline needs at least one stage");
  if (layers < stages) {
    throw std::invalid_argument(fmt::format(
        "{} layers cannot be split over {} pipeline stages (each stage needs at least one layer)",
        layers, stages));
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(stages), layers / stages);
  for (std::int64_t i = 0; i < layers % stages; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

std::int64_t static_bytes_per_parameter(std::int64_t dtype_bytes) {
  return dtype_bytes + 4 + (dtype_bytes >= 4 ? 8 : 12);
}

CostProfile transformer_costs(const TransformerModel& model, const GpuSpec& gpu,
                              std::int32_t stages) {
  const double rate = gpu.flops.flops_per_second() * gpu.efficiency;
  if (!(rate > 0)) throw std::invalid_argument("the GPU's effective FLOP rate must be positive");
  const FlopRate effective = FlopRate::flops_per_second(rate);
  const TransformerLayerCosts per_layer = transformer_layer_costs(model);
  const std::vector<std::int64_t> layers = split_layers(model.layers, stages);
  const auto bytes_per_param = static_cast<double>(static_bytes_per_parameter(model.dtype_bytes));

  CostProfile profile;
  for (std::int32_t i = 0; i < stages; ++i) {
    const auto n = static_cast<double>(layers[static_cast<std::size_t>(i)]);
    const bool first = i == 0;
    const bool last = i == stages - 1;
    const double head = last ? per_layer.lm_head_flops : 0.0;
    double params = n * per_layer.parameters;
    if (first) params += per_layer.embedding_parameters;
    if (last && stages > 1) params += per_layer.embedding_parameters;  // tied LM head copy
    StageCost c;
    c.forward = compute_time(n * per_layer.forward_flops + head, effective);
    c.backward_input = compute_time(n * per_layer.backward_input_flops + head, effective);
    c.backward_weight = compute_time(n * per_layer.backward_weight_flops + head, effective);
    c.recompute = c.forward;
    c.fused = Time::zero();
    c.activation = to_bytes(n * per_layer.activation_bytes);
    c.weight_grad = to_bytes(n * per_layer.weight_grad_bytes);
    c.stage_input = to_bytes(per_layer.hidden_state_bytes);
    c.p2p = to_bytes(per_layer.hidden_state_bytes);
    c.static_memory = to_bytes(params * bytes_per_param);
    profile.stages.push_back(c);
  }
  return profile;
}

}  // namespace bubblesim
