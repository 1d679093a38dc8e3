#include "sim/runner/op_time_floor.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/costmodel/model_flops.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {

void check_op_time_floor(const Scenario& sc, const ResolvedScenario& r) {
  if (!sc.model || !sc.gpu || sc.costs.times_key.empty() || r.costs.stages.empty()) return;
  const std::optional<double> sequence_s = seconds_at_peak(*sc.model, *sc.gpu);
  if (!sequence_s) return;
  // One microbatch of one data-parallel replica, shared by the tp x cp GPUs of each stage.
  const double gpus_per_stage = static_cast<double>(sc.parallelism.tp) * sc.parallelism.cp;
  const auto sequences = static_cast<double>(sc.model->micro_batch_size);
  const double floor_s = *sequence_s * sequences / gpus_per_stage;
  double given_s = 0;
  for (const StageCost& c : r.costs.stages) {
    const Time forward_backward = c.forward + c.backward_input;
    const Time pair =
        c.fused > Time::zero() ? std::min(c.fused, forward_backward) : forward_backward;
    given_s += (pair + c.backward_weight).seconds();
  }
  // A relative slack for the rounding of times to picoseconds.
  if (given_s >= floor_s * (1.0 - 1e-9)) return;
  const double peak = sc.gpu->flops.flops_per_second();
  const std::string fp8 = sc.model->fp8_linear
                              ? fmt::format(", its linear GEMMs at the FP8 peak of {:.4g}",
                                            sc.gpu->flops_fp8.flops_per_second() / 1e12)
                              : std::string();
  throw InputError({Diagnostic{
      sc.costs.times_where, sc.costs.times_key,
      fmt::format(
          "one microbatch's F + B + W over the {} stages takes {:.4g} ms per GPU, less than the "
          "{:.4g} ms its {:.4g} TFLOP of model FLOPs ({} x {} tokens) take at the GPU's peak of "
          "{:.4g} TFLOP/s{} on {} GPU{} per stage (an MFU of {:.0f}%); check these times and "
          "their units against model: and cluster.gpu.flops",
          r.costs.stages.size(), given_s * 1e3, floor_s * 1e3,
          training_flops_per_sequence(*sc.model) * sequences / 1e12, sc.model->micro_batch_size,
          sc.model->seq_len, peak / 1e12, fp8, gpus_per_stage, gpus_per_stage == 1 ? "" : "s",
          100.0 * floor_s / given_s)}});
}

}  // namespace bubblesim
