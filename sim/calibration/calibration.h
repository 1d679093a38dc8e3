#pragma once
// Calibration: the analytical transformer cost model (transformer_costs.h) next to a measured cost
// profile (cost_profile_csv.h, written by tools/profile/profile_block.py), per op and stage.
//
// The profile measures transformer layers only, so the model side is the per-layer formulas times
// the stage's layers, without the LM head and the embedding. Ratios are measured / model. The
// efficiency factor e of `cluster.gpu` (time = FLOPs / (peak e)) is fitted two ways over the F, B
// and W rows of every stage (FLOPs f_i, measured times t_i):
//   least squares on the times: minimise sum (t_i - f_i / (peak e))^2  =>  e = sum f_i^2 / (peak
//   sum f_i t_i) totals:                     e = sum f_i / (peak sum t_i)
// and the measured ordering of each stage is checked against the zero-bubble paper's
// T_W < T_F < T_B (Qi et al. 2023, sec. 2).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/cost_profile_csv.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

struct CalibrationRow {
  std::string op;  // forward | backward_input | backward_weight | activation | weight_grad | p2p
  int stage = 0;
  bool is_time = true;  // seconds when true, bytes otherwise
  double flops = 0;     // time rows: the model's FLOPs
  double model = 0;     // model seconds (at the given efficiency) or bytes
  double measured = 0;
  /// Time rows of a profile with a cv column: the measured coefficient of variation over the
  /// profiler's repetitions (what `variability` takes from the profile, docs/variability.md).
  std::optional<double> cv;
  double ratio() const { return model > 0 ? measured / model : 0.0; }
};

/// Measured ordering of one stage's F, B, W against T_W < T_F < T_B.
struct OrderingCheck {
  int stage = 0;
  Time forward, backward_input, backward_weight;
  bool w_below_f = false;
  bool f_below_b = false;
  bool holds() const { return w_below_f && f_below_b; }
};

struct CalibrationResult {
  std::vector<CalibrationRow> rows;
  std::vector<std::int64_t> layers_per_stage;
  double peak_flops = 0;
  double given_efficiency = 1.0;
  double fitted_efficiency = 0;  // least squares on the times
  double total_efficiency = 0;   // total FLOPs / total measured time / peak
  double worst_time_error = 0;   // largest |model at fitted e / measured - 1| over the time rows
  std::vector<OrderingCheck> ordering;
  bool has_lm_head = false;  // the model has a vocabulary the comparison leaves out
};

/// Number of stages a profile CSV has rows for (largest stage column + 1; 0 when none). Only a
/// first pass before read_cost_profile_csv, which does the validation.
int profile_stage_count(std::string_view csv);

/// Compares `profile` (one StageCost per stage, `ops` as given) with `model` on `gpu`, stage i
/// holding layers_per_stage[i] layers. Throws InputError when the sizes disagree or the profile
/// has no positive time to fit.
CalibrationResult calibrate(const MeasuredProfile& profile, const TransformerModel& model,
                            const GpuSpec& gpu, const std::vector<std::int64_t>& layers_per_stage);

/// The table and summary lines `bubblesim calibrate` prints.
std::string calibration_text(const CalibrationResult& result);

}  // namespace bubblesim
