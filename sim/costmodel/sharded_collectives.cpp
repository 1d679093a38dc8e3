#include "sim/costmodel/sharded_collectives.h"

#include <algorithm>

namespace bubblesim {
namespace {

/// What a collective of `comm` seconds leaves exposed beside `compute` seconds, plus the compute
/// it slows by holding a share f of the SMs while they overlap.
double beside(double comm, double compute, double f) {
  return std::max(0.0, comm - compute) + std::min(comm, compute) * f / (1.0 - f);
}

}  // namespace

ShardedExposure sharded_exposure(
    const std::vector<ShardUnit>& units, const ShardedSchedule& s,
    const std::function<UnitComm(double params, double linear)>& time) {
  ShardedExposure out;
  if (units.empty()) return out;
  const double f = s.sm_fraction;
  double all = 0, all_linear = 0;
  for (const ShardUnit& u : units) {
    all += u.params;
    all_linear += u.linear_params;
  }
  if (!s.prefetch) {
    // Each op waits for one collective of the whole stage's bytes (zero_overlap false).
    const UnitComm whole = time(all, all_linear);
    if (s.gather_forward) out.forward = whole.gather;
    if (s.gather_backward) out.backward_input = whole.gather;
    if (s.reduce_scatter) out.backward_weight = whole.scatter + whole.replicate;
    return out;
  }
  std::vector<UnitComm> comm;
  comm.reserve(units.size());
  for (const ShardUnit& u : units) comm.push_back(time(u.params, u.linear_params));

  if (s.gather_forward) {
    // F: the first unit's gather waits; each later one runs while the unit before computes.
    out.forward = comm.front().gather;
    for (std::size_t k = 1; k < units.size(); ++k)
      out.forward += beside(comm[k].gather, units[k - 1].forward_s, f);
  }

  // B runs the units in reverse. The first of them was the last of F and is kept gathered
  // (FSDP never reshards the root after forward; torchtitan keeps the last block and the head).
  // While unit k computes, the communicator runs the next unit's gather and the reduce-scatter
  // of the gradients finished before it; the replicate group's all-reduce runs beside them on
  // its own communicator. The last reduce-scatter waits at the end of the pass.
  const std::size_t m = units.size();
  const auto per = static_cast<std::size_t>(std::max<std::int64_t>(s.units_per_reduce, 1));
  UnitComm pending;  // the reduce-scatter issued after the unit before
  double group = 0, group_linear = 0, gathers = 0, scatters = 0, backward = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const ShardUnit& u = units[m - 1 - k];
    double shard = 0;
    if (s.gather_backward && k + 1 < m) {
      shard += comm[m - 2 - k].gather;
      gathers += comm[m - 2 - k].gather;
    }
    shard += pending.scatter;
    backward += beside(std::max(shard, pending.replicate), u.backward_s, f);
    pending = UnitComm{};
    if (!s.reduce_scatter) continue;
    group += u.params;
    group_linear += u.linear_params;
    if ((k + 1) % per == 0 || k + 1 == m) {
      pending = per == 1 ? comm[m - 1 - k] : time(group, group_linear);
      pending.gather = 0;
      scatters += pending.scatter + pending.replicate;
      group = group_linear = 0;
    }
  }
  backward += pending.scatter + pending.replicate;
  const double moved = gathers + scatters;
  if (backward > 0 && moved > 0) {
    out.backward_input = backward * gathers / moved;
    out.backward_weight = backward - out.backward_input;
  }
  return out;
}

}  // namespace bubblesim
