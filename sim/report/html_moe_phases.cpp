#include "sim/report/html_moe_phases.h"

#include <algorithm>
#include <stdexcept>

#include "schedules/a2a_exposure.h"
#include "sim/report/html_time.h"

namespace bubblesim {
namespace {

bool has_moe(const std::vector<StageCost>& costs) {
  return std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward + c.moe.a2a_backward + c.moe.experts.load.forward > Time::zero();
  });
}

/// The TP all-reduce time at the end of `op` (docs/parallelism.md), per table stage of a table
/// with `chunks` table stages per pipeline stage.
Time tp_time_of(const SyncCosts& sync, const Op& op, std::int64_t chunks) {
  auto at = [&](const std::vector<Time>& v, std::int32_t s) {
    const auto ps = static_cast<std::size_t>(s / chunks);
    return ps < v.size() ? Time::from_ps(v[ps].ps() / chunks) : Time::zero();
  };
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Recompute:
      return at(sync.tp_forward, op.stage);
    case OpKind::Backward:
      return at(sync.tp_backward, op.stage);
    case OpKind::ForwardBackward:
      return at(sync.tp_forward, op.stage) + at(sync.tp_backward, op.backward_stage);
    default:
      return Time::zero();
  }
}

}  // namespace

nlohmann::json moe_phase_slices(const ResolvedScenario& resolved, const ScheduleRun& run,
                                double exact_until_us) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<StageCost>& costs = run.stage_costs;
  if (!has_moe(costs)) return out;
  const TableIndex index(run.table);
  const std::int64_t chunks = std::max(run.table.chunks, 1);
  for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
    if (d >= run.simulation.timings.size()) break;
    for (std::size_t i = 0; i < run.table.device_ops[d].size(); ++i) {
      const Op& op = run.table.device_ops[d][i];
      const OpTiming& t = run.simulation.timings[d][i];
      if (t.start.ps() < 0 || t.end.ps() < 0 || html_us(t.start) >= exact_until_us) continue;
      const bool split = backward_split(op, index);
      const std::string name = to_string(op);
      auto slice = [&](char kind, Time start, Time end) {
        if (end > start)
          out.push_back({d, std::string(1, kind), html_us(start), html_us(end), name});
      };
      // As the trace draws them: the experts from the op's start, the exposed all-to-all before
      // the op's TP all-reduce at its end and the slowed compute before that; the hidden
      // all-to-all from the op's start (it runs beside the compute, spread over the op).
      const OpExperts experts = op_experts(op, costs, split);
      slice('e', t.start, std::min(t.end, t.start + experts.load));
      const A2aOverlap a2a = op_a2a(op, costs, split);
      const Time tail = t.end - tp_time_of(resolved.sync, op, chunks);
      slice('s', tail - a2a.exposed - a2a.slowdown, tail - a2a.exposed);
      slice('h', t.start, std::min(t.end, t.start + a2a.hidden));
      slice('x', tail - a2a.exposed, tail);
    }
  }
  return out;
}

nlohmann::json expert_memory_per_device(const ScheduleRun& run) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<StageCost>& costs = run.stage_costs;
  if (!has_expert_memory(costs)) return out;
  const auto held = run.table.placement.stages_by_device(run.table.devices);
  for (std::int32_t d = 0; d < run.table.devices; ++d) {
    Bytes weights, kept;
    for (std::int32_t s : held[static_cast<std::size_t>(d)]) {
      if (static_cast<std::size_t>(s) >= costs.size()) continue;
      weights += costs[static_cast<std::size_t>(s)].moe.expert_static;
      kept += costs[static_cast<std::size_t>(s)].moe.expert_activation;
    }
    out.push_back({weights.count(), kept.count()});
  }
  return out;
}

}  // namespace bubblesim
