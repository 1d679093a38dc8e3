#pragma once
// The numbers a training recipe is read in (docs/recipes.md): tokens per second per GPU, model
// TFLOP/s per GPU, MFU and GPU-hours per trillion tokens, from the scenario's global batch and a
// schedule's iteration time. Model FLOPs are counted by sim/costmodel/model_flops.h.

#include <optional>

#include "sim/scenario/scenario.h"

namespace bubblesim {

/// Each member is none where it cannot be known: tokens need a model (its seq_len), MFU also the
/// GPU's peak, and all an iteration time.
struct Throughput {
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> model_tflops_per_gpu;  // TFLOP/s (1e12)
  /// Model FLOP utilization: the time the model's FLOPs take at the GPU's peak over the time they
  /// took. Each FLOP counts against the peak of the precision it runs in: the dtype's
  /// (`cluster.gpu.flops`), and under model.fp8_linear the FP8 peak for the linear GEMMs. So it
  /// is a fraction a GPU can reach, in (0, 1]: against the BF16 peak alone an FP8 run could read
  /// above 100%, and op times faster than the peak are refused (sim/runner/op_time_floor.h).
  /// model_flops.h: seconds_at_peak.
  std::optional<double> mfu;
  std::optional<double> gpu_hours_per_trillion_tokens;
};

/// The global batch (microbatches x micro_batch_size x dp sequences) of `scenario` over an
/// iteration of `iteration_time_s`, spread over its stages x dp x tp x cp GPUs.
Throughput throughput(const Scenario& scenario, std::optional<double> iteration_time_s);

}  // namespace bubblesim
