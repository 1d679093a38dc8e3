#pragma once
// The transformer cost model as the scenario loader, calibration and parallelism use it: per-layer
// FLOPs and bytes of one GPU (sim/costmodel/layer_work.h) and the derived cost profile
// (sim/costmodel/model_costs.h). Formulas, variants and sources: docs/models.md.

#include <cstdint>
#include <vector>

#include "schedules/stage_costs.h"
#include "sim/costmodel/model_costs.h"
#include "sim/costmodel/stage_layout.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

/// Per-layer totals of one GPU (no tensor parallelism), FLOPs and bytes as reals.
struct TransformerLayerCosts {
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  double activation_bytes = 0;
  double weight_grad_bytes = 0;
  double hidden_state_bytes = 0;  // s b h dtype_bytes: p2p and stage input
  double parameters = 0;
  double lm_head_flops = 0;  // 2 b s h V per pass of the last stage
  double embedding_parameters = 0;
};

TransformerLayerCosts transformer_layer_costs(const TransformerModel& model);

/// Bytes per parameter without ZeRO (18 for 16-bit dtypes, 16 for fp32).
std::int64_t static_bytes_per_parameter(std::int64_t dtype_bytes);

/// The derived profile on one GPU per stage (no TP, no communication). Throws
/// std::invalid_argument when the layout does not fit or the GPU rate is not positive.
CostProfile transformer_costs(const TransformerModel& model, const GpuSpec& gpu,
                              std::int32_t stages);

}  // namespace bubblesim
