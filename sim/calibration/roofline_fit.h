#pragma once
// Fitting the roofline efficiency curve (op_timing.h) to a measured cost profile: the model's
// per-layer work (layer_work.h: GEMM shapes, attention kernels, memory-bound bytes, each named)
// timed at the GPU's curve, next to the measured F, B and W of every stage (docs/calibration.md).
//
// Two parameters are fitted, each to the rows that depend on it most, by minimising the sum of
// squared relative errors (measured / model - 1) with a golden-section search over (0, 1]:
//   gemm_max  to the W rows (weight-gradient GEMMs only, with `bias_grad: backward_input`),
//   memory    to the F and B rows (their memory-bound kernels and the attention's batched GEMMs,
//             which are bound by their operand traffic), at the fitted gemm_max;
// the two fits are alternated three times (W holds memory-bound bias sums when `bias_grad:
// backward_weight`). gemm_overhead and the FlashAttention fractions are kept: one profile of one
// model size cannot separate a per-call overhead from the ceiling.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_spec.h"
#include "sim/scenario/cost_profile_csv.h"

namespace bubblesim {

struct RooflineRow {
  std::string op;  // forward | backward_input | backward_weight
  int stage = 0;
  std::int64_t layers = 0;
  double given_s = 0;   // the model at the GPU's curve (preset or scenario)
  double fitted_s = 0;  // the model at the fitted curve
  double measured_s = 0;
};

/// One named piece of one layer's work at the fitted curve (the mechanisms the times come from).
struct RooflineItem {
  std::string pass;  // F | B | W
  std::string name;  // the GEMM or kernel name of layer_work.cpp
  bool gemm = false;
  double amount = 0;  // FLOPs (GEMMs, attention kernels) or bytes (memory-bound kernels)
  double seconds = 0;
};

struct RooflineFit {
  EfficiencyModel given, fitted;
  bool fitted_gemm = false;    // the profile has W rows with a positive time
  bool fitted_memory = false;  // the profile has F or B rows with memory-bound work
  std::vector<RooflineRow> rows;
  std::vector<RooflineItem> breakdown;       // one layer, fitted curve
  double worst_given = 0, worst_fitted = 0;  // largest |model / measured - 1| over the rows
};

/// Fits `gpu`'s roofline curve (it must be one, with a memory bandwidth) to `profile`, stage i
/// holding layers_per_stage[i] dense layers sharded as `sharding`. Throws InputError when the
/// sizes disagree or nothing can be fitted.
RooflineFit fit_roofline(const MeasuredProfile& profile, const TransformerModel& model,
                         const GpuSpec& gpu, const Sharding& sharding,
                         const std::vector<std::int64_t>& layers_per_stage);

/// The table, the fitted parameters and the per-layer breakdown `bubblesim calibrate` prints.
std::string roofline_fit_text(const RooflineFit& fit);

}  // namespace bubblesim
