#include "sim/engine/metrics.h"

#include <algorithm>

namespace bubblesim {

std::vector<DeviceTimes> device_times(const Table& table, const OpTimings& timings) {
  std::vector<DeviceTimes> out(static_cast<std::size_t>(table.devices));
  for (std::size_t d = 0; d < out.size(); ++d) {
    const auto row = timings[d];
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (row[i].end < Time::zero()) continue;  // never ran (deadlock)
      out[d].add(table.device_ops[d][i].kind, row[i].start, row[i].end);
    }
  }
  return out;
}

Time backward_recompute_time(const std::vector<StageCost>& stage_costs, std::int32_t microbatches,
                             const std::vector<std::int32_t>& stages) {
  Time per_microbatch;
  for (std::int32_t s : stages) {
    if (s >= 0 && static_cast<std::size_t>(s) < stage_costs.size())
      per_microbatch += stage_costs[static_cast<std::size_t>(s)].backward_recompute.time;
  }
  return per_microbatch * microbatches;
}

Metrics compute_metrics(const Table& table, const std::vector<StageCost>& stage_costs,
                        const std::vector<DeviceTimes>& times, const MemoryPeaks& peaks,
                        const std::vector<Time>& exposed_comm) {
  Metrics m;
  const auto devices = static_cast<std::size_t>(table.devices);
  m.busy_per_device.assign(devices, Time::zero());
  m.span_per_device.assign(devices, Time::zero());
  Time total_busy;
  for (std::size_t d = 0; d < devices; ++d) {
    const DeviceTimes& t = times[d];
    m.makespan = std::max(m.makespan, t.end);
    m.busy_per_device[d] = t.busy;
    m.recompute_time += t.recompute;
    if (t.first <= t.last) m.span_per_device[d] = t.last - t.first;
    m.stage_span_max = std::max(m.stage_span_max, m.span_per_device[d]);
    total_busy += m.busy_per_device[d];
  }
  std::vector<std::int32_t> all(stage_costs.size());
  for (std::size_t s = 0; s < all.size(); ++s) all[s] = static_cast<std::int32_t>(s);
  m.recompute_time += backward_recompute_time(stage_costs, table.microbatches, all);
  const double work = static_cast<double>(total_busy.ps());
  if (m.makespan > Time::zero()) {
    m.bubble_ratio =
        1.0 - work / (static_cast<double>(devices) * static_cast<double>(m.makespan.ps()));
  }
  if (m.stage_span_max > Time::zero()) {
    m.bubble_ratio_span =
        1.0 - work / (static_cast<double>(devices) * static_cast<double>(m.stage_span_max.ps()));
  }

  m.memory.peak_activation_per_device = peaks.activation;
  m.memory.peak_activation_time_per_device = peaks.activation_time;
  m.memory.peak_memory_per_device = peaks.total;
  m.memory.peak_activation_units_per_device.assign(devices, 0.0);
  // One unit = the activation of one table stage for one microbatch (the largest stage's when
  // stages differ, so units never overstate).
  Bytes unit;
  for (const StageCost& c : stage_costs) unit = std::max(unit, c.activation);
  for (std::size_t d = 0; d < devices; ++d) {
    m.memory.peak_activation = std::max(m.memory.peak_activation, peaks.activation[d]);
    m.memory.peak_activation_units_per_device[d] =
        unit > Bytes::zero() ? peaks.activation[d] / unit
                             : static_cast<double>(peaks.activation_count[d]);
    m.memory.peak_activation_units =
        std::max(m.memory.peak_activation_units, m.memory.peak_activation_units_per_device[d]);
  }
  m.comm.exposed_comm_per_device = exposed_comm;
  for (Time t : exposed_comm) m.comm.exposed_comm = std::max(m.comm.exposed_comm, t);
  return m;
}

}  // namespace bubblesim
