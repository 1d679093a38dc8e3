#include "sim/costmodel/stage_recompute.h"

#include <algorithm>
#include <cmath>

namespace bubblesim {

StageRecompute stage_recompute(const RecomputeSettings& settings, const StageLayers& l) {
  const double n = l.dense + l.moe;
  auto sum = [&](double LayerBytes::*field) {
    return l.dense * (l.dense_bytes.*field) + l.moe * (l.moe_bytes.*field);
  };
  // The largest of a per-layer size over the layer kinds the stage holds.
  auto largest = [&](double LayerBytes::*field) {
    return std::max(l.dense > 0 ? l.dense_bytes.*field : 0.0, l.moe > 0 ? l.moe_bytes.*field : 0.0);
  };
  StageRecompute out;
  out.full_activation = sum(&LayerBytes::activation) + l.kept;
  out.activation = out.full_activation;
  const double input = std::max(l.dense_bytes.input, l.moe_bytes.input);
  out.stage_input = input;
  switch (settings.policy) {
    case MemoryPolicy::None:
      return out;
    case MemoryPolicy::Selective:
      out.activation = out.full_activation - sum(&LayerBytes::selective);
      out.units = n;
      out.unit = n > 0 ? largest(&LayerBytes::selective) : 0.0;
      return out;
    case MemoryPolicy::Op:
      out.activation = sum(&LayerBytes::op_saved) + l.kept;
      out.units = n;
      out.unit = n > 0 ? largest(&LayerBytes::op_unit) : 0.0;
      return out;
    case MemoryPolicy::Full:
      break;
  }
  double recomputed = n, units = n, per_unit = 1;
  if (settings.every) {
    recomputed = units = std::floor(n / static_cast<double>(*settings.every));
  } else if (settings.layers) {
    recomputed = units = std::min(n, static_cast<double>(*settings.layers));
  } else if (settings.unit_layers) {
    per_unit = std::min(n, static_cast<double>(*settings.unit_layers));
    units = std::ceil(n / static_cast<double>(*settings.unit_layers));
  }
  out.share = n > 0 ? recomputed / n : 0.0;
  // With dense and MoE layers in one stage, the layers left alone keep the stage's mean.
  const double kept = (1.0 - out.share) * sum(&LayerBytes::activation) + units * input + l.kept;
  if (settings.granularity == RecomputeGranularity::Stage) {
    out.stage_input = kept;
    return out;
  }
  out.activation = kept;
  out.units = units;
  out.unit = units > 0 ? std::max(0.0, per_unit * largest(&LayerBytes::activation) - input) : 0.0;
  return out;
}

}  // namespace bubblesim
