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
  std::optional<double> mfu;                   // model FLOP/s over the GPU's dense peak
  std::optional<double> gpu_hours_per_trillion_tokens;
};

/// The global batch (microbatches x micro_batch_size x dp sequences) of `scenario` over an
/// iteration of `iteration_time_s`, spread over its stages x dp x tp x cp GPUs.
Throughput throughput(const Scenario& scenario, std::optional<double> iteration_time_s);

}  // namespace bubblesim
