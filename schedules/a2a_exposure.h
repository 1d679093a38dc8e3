#pragma once
// The expert all-to-all inside a table's ops (docs/moe.md): for the report's
// `simulation.a2a_s`, `simulation.a2a_exposed_s` and `simulation.a2a_slowdown_s`.

#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "schedules/table_index.h"

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

/// Whether `op`'s backward (a B, or the B half of an F&B) has its own W op in the table: the
/// `split` of op_a2a and op_experts. False for other ops.
bool backward_split(const Op& op, const TableIndex& index);

/// One op's all-to-all as a2a_per_device counts it: hidden under other compute, exposed, and the
/// compute its SMs slow. `split`: the op's backward (B, or the B half of an F&B) has its own W.
A2aOverlap op_a2a(const Op& op, const std::vector<StageCost>& costs, bool split);

/// One op's routed-expert GEMM time (the trace's and the HTML timeline's expert phase) at the
/// scenario's `moe.imbalance` (load) and at uniform routing; `split` as above.
struct OpExperts {
  Time load, uniform;
};
OpExperts op_experts(const Op& op, const std::vector<StageCost>& costs, bool split);

}  // namespace bubblesim
