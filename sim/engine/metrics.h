#pragma once
// Metrics of one replay (README "Metrics and formulas"), computed from per-op timings after the
// run.
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

/// What the metrics need from one device's timings (a replay may collect it as it goes).
struct DeviceTimes {
  Time busy;                 // compute ops' durations (recompute included)
  Time recompute;            // R ops' durations
  Time first = Time::max();  // first compute op's start
  Time last;                 // last compute op's end
  Time end;                  // latest end of any op (copies included)
  /// One op that ran from `start` to `end`; `compute`: not a copy.
  void add(OpKind kind, Time start, Time finish) {
    if (finish > end) end = finish;
    if (stream_of(kind) != Stream::Compute) return;
    busy += finish - start;
    if (kind == OpKind::Recompute) recompute += finish - start;
    if (start < first) first = start;
    if (finish > last) last = finish;
  }
};
/// The DeviceTimes of every device from the timings (ops that never ran are skipped).
std::vector<DeviceTimes> device_times(const Table& table, const OpTimings& timings);

/// The recompute inside the backwards of `stages` (StageCost::backward_recompute, docs/memory.md):
/// every (stage, microbatch) has one backward, which redoes its stage's part.
Time backward_recompute_time(const std::vector<StageCost>& stage_costs, std::int32_t microbatches,
                             const std::vector<std::int32_t>& stages);

/// `recompute_time`: the R ops' durations and the recompute inside every backward.
Metrics compute_metrics(const Table& table, const std::vector<StageCost>& stage_costs,
                        const std::vector<DeviceTimes>& times, const MemoryPeaks& peaks,
                        const std::vector<Time>& exposed_comm);

}  // namespace bubblesim
