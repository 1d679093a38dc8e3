#include "sim/report/throughput.h"

#include "sim/costmodel/model_flops.h"

namespace bubblesim {

Throughput throughput(const Scenario& sc, std::optional<double> iteration_time_s) {
  Throughput out;
  if (!sc.model || sc.model->seq_len <= 0 || !iteration_time_s || *iteration_time_s <= 0.0)
    return out;
  const TransformerModel& model = *sc.model;
  const double sequences = static_cast<double>(sc.microbatches) *
                           static_cast<double>(model.micro_batch_size) *
                           static_cast<double>(sc.parallelism.dp);
  const double gpus = static_cast<double>(sc.parallelism.world(sc.stages));
  const double tokens = sequences * static_cast<double>(model.seq_len);
  const double tokens_per_s_per_gpu = tokens / *iteration_time_s / gpus;
  out.tokens_per_s_per_gpu = tokens_per_s_per_gpu;
  out.gpu_hours_per_trillion_tokens = 1e12 / tokens_per_s_per_gpu / 3600.0;
  const ModelFlops flops = training_flops_split(model);
  out.model_tflops_per_gpu = sequences * flops.total() / *iteration_time_s / gpus / 1e12;
  if (const std::optional<double> ideal = sc.gpu ? seconds_at_peak(model, *sc.gpu) : std::nullopt)
    out.mfu = sequences * *ideal / gpus / *iteration_time_s;
  return out;
}

}  // namespace bubblesim
