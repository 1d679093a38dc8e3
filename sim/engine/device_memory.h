#pragma once
// DeviceMemory: one device's memory during a replay (static bytes plus resident activations),
// with its peaks. What each op allocates and frees comes from schedules/activation_memory.h, the
// rules the optimizer plans with. Shared by MemoryAccounting (the event loop, where copies make
// residency depend on time) and the list-scheduling replay (no copies: what each op allocates
// and frees is fixed by the table).

#include <cstdint>
#include <vector>

#include "schedules/activation_memory.h"  // the release rules, shared with the planner
#include "schedules/stage_costs.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/metrics.h"
#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

struct DeviceMemory {
  Bytes static_bytes;
  Bytes resident, peak, total_peak;  // activations now, their peak; the peak with static memory
  Time peak_time, total_peak_time;   // when each peak was first reached
  std::int64_t units = 0, unit_peak = 0;  // live (stage, microbatch) activations

  explicit DeviceMemory(Bytes static_memory = Bytes::zero())
      : static_bytes(static_memory), total_peak(static_memory) {}
  /// `bytes` become resident at `now`; `new_unit`: a (stage, microbatch) starts to count.
  void allocate(Bytes bytes, bool new_unit, Time now) {
    resident += bytes;
    if (new_unit && ++units > unit_peak) unit_peak = units;
    if (resident > peak) {
      peak = resident;
      peak_time = now;
    }
    const Bytes total = resident + static_bytes;
    if (total > total_peak) {
      total_peak = total;
      total_peak_time = now;
    }
  }
  void release(Bytes bytes, bool unit) {
    resident -= bytes;
    if (unit) --units;
  }
  Bytes total() const { return resident + static_bytes; }
};

/// The peaks of every device, for compute_metrics.
MemoryPeaks peaks_of(const std::vector<DeviceMemory>& devices);
/// Static memory per device: each distinct stage it holds, once.
std::vector<DeviceMemory> devices_of(const Table& table, const std::vector<StageCost>& costs);

}  // namespace bubblesim
