#pragma once
// The expert all-to-all inside a table's ops (docs/moe.md): for the report's
// `simulation.a2a_s`, `simulation.a2a_exposed_s` and `simulation.a2a_slowdown_s`.

#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"

namespace bubblesim {

struct A2aTime {
  Time total;     // dispatch + combine time inside the device's ops
  Time exposed;   // the part that lengthens them (not hidden under other compute)
  Time slowdown;  // compute lost while hidden all-to-all kernels hold SMs (comm_sm_fraction)
};

/// Per device: F and R carry their stage's F all-to-all, B its B all-to-all (exposed as the
/// costs say), an F&B op both halves' with fused_a2a() of them exposed and slowing compute (none
/// when the scenario gave the fused time).
std::vector<A2aTime> a2a_per_device(const Table& table, const std::vector<StageCost>& costs);

}  // namespace bubblesim
