#pragma once
// DeviceMemory: one device's memory during a replay (static bytes plus resident activations),
// with its peaks; and the release rules of an activation's backward (SCHEDULES.md 6.2). Shared
// by MemoryAccounting (the event loop, where copies make residency depend on time) and the
// list-scheduling replay (no copies: what each op allocates and frees is fixed by the table).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/replay_rules.h"
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

/// What the op completing the forward allocates: the stage input only when the activation is
/// recomputed before its backward, else the whole activation.
inline Bytes forward_allocation(const StageCost& c, bool recomputed) {
  return recomputed ? c.stage_input : c.activation;
}

/// What a split backward allocates at its start: the part of M_W it creates beyond the M_B it
/// holds, when M_W > M_B (the weight-gradient GEMMs' output gradients, made by B and kept until
/// W, outweigh what B frees; sequence parallelism, docs/memory.md). B then frees nothing and W
/// frees M_W. Zero otherwise (and for an unsplit backward, which keeps nothing for a W).
inline Bytes backward_growth(const StageCost& c, bool split) {
  return split ? Bytes(replay_rules::split_backward_allocates(c.activation.count(),
                                                              c.weight_grad.count()))
               : Bytes::zero();
}

/// What the backward of an activation frees at its end (before clamping to what is resident),
/// and whether it ends the activation's count; nullopt when it frees nothing (a split backward
/// under BackwardComplete: the W frees everything).
struct BackwardRelease {
  Bytes bytes;
  bool unit;
};
inline std::optional<BackwardRelease> backward_release(const StageCost& c, bool split,
                                                       bool recomputed, ReleaseConvention release) {
  const Bytes input = recomputed ? c.stage_input : Bytes::zero();
  if (!split) return BackwardRelease{c.activation + input, true};
  if (release == ReleaseConvention::Split) {
    return BackwardRelease{
        Bytes(replay_rules::split_backward_frees(c.activation.count(), c.weight_grad.count())) +
            input,
        false};
  }
  return std::nullopt;
}

}  // namespace bubblesim
