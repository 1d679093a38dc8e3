#pragma once
// Metrics of one replay (DESIGN.md section 5), computed from per-op timings after the run.
//
//   makespan          end of the last op (all devices start at 0)
//   stage_span_max    largest per-device span, first compute op start to last compute op end
//   bubble_ratio      1 - sum(busy) / (devices * makespan)
//   bubble_ratio_span 1 - sum(busy) / (devices * stage_span_max)   (the zero-bubble paper's rate)
//   busy              compute-stream time of F, B, W, R and F&B ops (copies are not compute)
//   peak_activation_units  peak bytes / one table stage's activation M_B; when M_B is zero, the
//                     peak number of live (stage, microbatch) activations instead

#include <cstdint>
#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

struct MemoryPeaks {
  std::vector<Bytes> activation;
  std::vector<Time> activation_time;
  std::vector<Bytes> total;
  std::vector<std::int64_t> activation_count;
};

Metrics compute_metrics(const Table& table, const std::vector<StageCost>& stage_costs,
                        const OpTimings& timings, const MemoryPeaks& peaks,
                        const std::vector<Time>& exposed_comm);

}  // namespace bubblesim
