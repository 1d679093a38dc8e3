#include <fmt/format.h>

#include <algorithm>

#include "schedules/a2a_exposure.h"
#include "sim/engine/gradient_sync_state.h"

namespace bubblesim {

void GradientSync::Impl::on_compute_start(std::int32_t device, std::int32_t position, Time start,
                                          Time end) {
  const auto d = static_cast<std::size_t>(device);
  if (!observers.empty() &&
      (!plan.tp_forward.empty() || !plan.tp_backward.empty() || !plan.a2a_costs.empty()))
    report_tp(device, position, start, end);
  if (!observers.empty() && !plan.dp_in_ops.gather_forward.empty()) {
    report_sharded(
        device,
        table.device_ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(position)],
        start, end);
  }
  auto it = last_grad.find({device, position});
  if (it != last_grad.end()) {
    for (std::int32_t s : it->second) {
      const SyncPlan::Ready ready = readiness(static_cast<std::size_t>(s));
      if (ready == SyncPlan::Ready::AfterCompute) continue;
      // During: each lane's buckets fill across the op (the layers hold dense and expert
      // parameters), the last layers' first. After: all of them when the op ends.
      for (const LaneState& lane : stages[static_cast<std::size_t>(s)].lanes) {
        const auto k = static_cast<std::int64_t>(lane.units.size());
        for (std::int64_t b = 0; b < k; ++b) {
          ready_at(lane.units[static_cast<std::size_t>(b)],
                   ready == SyncPlan::Ready::AfterBackward
                       ? end
                       : start + Time::from_ps((end - start).ps() * (b + 1) / k));
        }
      }
    }
  }
  if (position == per_device.last_compute[d]) {
    per_device.compute_end[d] = end;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const auto& h = stages[s].holders;
      if (readiness(s) != SyncPlan::Ready::AfterCompute ||
          std::find(h.begin(), h.end(), device) == h.end())
        continue;
      for (const LaneState& lane : stages[s].lanes)
        for (std::size_t u : lane.units) ready_at(u, end);
    }
  }
}

void GradientSync::Impl::report_tp(std::int32_t device, std::int32_t position, Time start,
                                   Time end) {
  const Op& op =
      table.device_ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(position)];
  report_experts(device, op, start, end);
  auto at = [](const std::vector<Time>& v, std::int32_t s) {
    return v.empty() ? Time::zero() : v[static_cast<std::size_t>(s)];
  };
  Time tp_time;
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Recompute:
      tp_time = at(plan.tp_forward, op.stage);
      break;
    case OpKind::Backward:
      tp_time = at(plan.tp_backward, op.stage);
      break;
    case OpKind::ForwardBackward:
      tp_time = at(plan.tp_forward, op.stage) + at(plan.tp_backward, op.backward_stage);
      break;
    default:
      return;
  }
  // The exposed expert all-to-all (docs/moe.md) as a slice before the TP one, and before it the
  // compute lost while the hidden all-to-all held SMs (overlap.comm_sm_fraction).
  const A2aOverlap a2a = plan.a2a_as_flows ? A2aOverlap{} : a2a_of(op);
  auto slice = [&](Time length, Time before, std::string name) {
    if (length <= Time::zero()) return;
    CollectiveEvent e;
    e.name = std::move(name);
    e.device = device;
    e.start = end - tp_time - before - length;
    e.end = end - tp_time - before;
    for (EngineObserver* o : observers) o->on_collective(e);
  };
  slice(a2a.exposed, Time::zero(), fmt::format("expert all-to-all {} (exposed)", to_string(op)));
  slice(a2a.slowdown, a2a.exposed,
        fmt::format("expert all-to-all {} (hidden {:.3f} ms; its SMs slow compute)", to_string(op),
                    a2a.hidden.milliseconds()));
  if (tp_time <= Time::zero()) return;
  // TP all-reduces are serialised with the op's compute (Megatron without overlap); the trace
  // shows them as one slice at the end of the op.
  CollectiveEvent e;
  e.name = fmt::format("tp all-reduce {}", to_string(op));
  e.device = device;
  e.start = end - tp_time;
  e.end = end;
  for (EngineObserver* o : observers) o->on_collective(e);
}

void GradientSync::Impl::report_sharded(std::int32_t device, const Op& op, Time start, Time end) {
  const SyncPlan::InOps& z = plan.dp_in_ops;
  auto at = [](const std::vector<Time>& v, std::int32_t s) {
    return v[static_cast<std::size_t>(s)];
  };
  auto tp = [&](const std::vector<Time>& v, std::int32_t s) {
    return v.empty() ? Time::zero() : v[static_cast<std::size_t>(s)];
  };
  Time gather, scatter, tp_time;
  switch (op.kind) {
    case OpKind::Forward:
      gather = at(z.gather_forward, op.stage);
      break;
    case OpKind::Backward:
      // A full backward (its W inside unless the table has one) gathers and reduce-scatters.
      gather = at(z.gather_backward, op.stage);
      if (!index.has_weight(op.stage, op.microbatch)) scatter = at(z.reduce_scatter, op.stage);
      tp_time = tp(plan.tp_backward, op.stage);
      break;
    case OpKind::Weight:
      scatter = at(z.reduce_scatter, op.stage);
      break;
    case OpKind::ForwardBackward:
      gather = at(z.gather_forward, op.stage) + at(z.gather_backward, op.backward_stage);
      if (!index.has_weight(op.backward_stage, op.backward_microbatch))
        scatter = at(z.reduce_scatter, op.backward_stage);
      tp_time = tp(plan.tp_forward, op.stage) + tp(plan.tp_backward, op.backward_stage);
      break;
    default:
      return;
  }
  report_collective(observers, fmt::format("dp all-gather {} (exposed)", to_string(op)), device,
                    start, std::min(end, start + gather));
  const Time to = end - std::min(end - start, tp_time);
  report_collective(observers, fmt::format("dp reduce-scatter {} (exposed)", to_string(op)), device,
                    std::max(start, to - scatter), to);
}

void GradientSync::Impl::report_experts(std::int32_t device, const Op& op, Time start, Time end) {
  if (plan.a2a_costs.empty()) return;
  // The op's routed-expert time at the scenario's imbalance and at uniform routing.
  const OpExperts experts = op_experts(op, plan.a2a_costs, backward_split(op, index));
  const Time load = experts.load, uniform = experts.uniform;
  if (load <= Time::zero()) return;
  // One slice for the op's MoE layers' routed experts (its layers interleave attention, dispatch,
  // experts and combine; the slice shows their sum from the op's start).
  PhaseEvent e;
  e.device = device;
  e.start = start;
  e.end = std::min(end, start + load);
  const Time hot = load - uniform;
  e.name = hot > Time::zero() ? fmt::format("routed experts {} (+{:.3f} ms: hottest expert's load)",
                                            to_string(op), hot.milliseconds())
                              : fmt::format("routed experts {}", to_string(op));
  e.args =
      fmt::format(R"({{"experts_ms":{:.6f},"uniform_routing_ms":{:.6f},"imbalance_ms":{:.6f}}})",
                  load.milliseconds(), uniform.milliseconds(), hot.milliseconds());
  for (EngineObserver* o : observers) o->on_phase(e);
}

A2aOverlap GradientSync::Impl::a2a_of(const Op& op) const {
  return op_a2a(op, plan.a2a_costs, backward_split(op, index));
}

void GradientSync::Impl::finish(Metrics& m, bool completed) {
  SyncMetrics& sm = m.sync;
  sm.enabled = true;
  sm.collectives = plan.tp_summaries;
  const auto devices = static_cast<std::size_t>(table.devices);
  for (std::size_t d = 0; d < devices; ++d) sm.tp_comm = std::max(sm.tp_comm, per_device.tp[d]);
  if (!completed) return;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageState& st = stages[s];
    for (const LaneState& lane : st.lanes) {
      sm.dp_sync = std::max(sm.dp_sync, lane.dp_time);
      sm.replica_sync = std::max(sm.replica_sync, lane.replica_time);
    }
    for (std::size_t l = 0; l < kLanes; ++l) {
      const LaneState& lane = st.lanes[l];
      if (lane.units.empty()) continue;
      const char* what = l == kExperts ? "expert " : "";
      const auto count = static_cast<std::int32_t>(lane.units.size());
      if (has_replica_phase(st)) {
        sm.collectives.push_back(
            CollectiveSummary{fmt::format("{}replica all-reduce stage {}", what, s), "ring",
                              static_cast<std::int32_t>(st.holders.size()), count, lane.bytes,
                              lane.replica_time, lane.replica_closed});
      }
      const std::int32_t ranks = dp_group_size(static_cast<Lane>(l), st.holders.front());
      // Named by the collective it runs; the experts' line also when no GPU shares them.
      if (plan.end.runs && (ranks > 1 || l == kExperts)) {
        sm.collectives.push_back(CollectiveSummary{
            fmt::format("{}dp {} stage {}", what, collective_kind_name(plan.end.kind), s),
            std::string(collective_algorithm_name(plan.collective.algorithm)), ranks, count,
            lane.bytes, lane.dp_time, lane.dp_closed});
      }
    }
  }
  for (Time t : per_device.compute_end) sm.compute_end = std::max(sm.compute_end, t);
  sm.sync_end_per_device.assign(devices, Time::zero());
  sm.optimizer_end_per_device.assign(devices, Time::zero());
  Time last_sync;
  for (std::size_t d = 0; d < devices; ++d) {
    Time sync_end = per_device.compute_end[d];
    for (const StageState& st : stages) {
      if (std::find(st.holders.begin(), st.holders.end(), static_cast<std::int32_t>(d)) !=
              st.holders.end() &&
          !(st.lanes[kDense].units.empty() && st.lanes[kExperts].units.empty())) {
        sync_end = std::max(sync_end, st.end);
      }
    }
    sm.sync_end_per_device[d] = sync_end;
    last_sync = std::max(last_sync, sync_end);
    const Time opt = d < plan.optimizer.size() ? plan.optimizer[d] : Time::zero();
    sm.optimizer = std::max(sm.optimizer, opt);
    // After the step the gather is exposed; before the next forward, what that op waited.
    const bool after = plan.parameter_gather.when == SyncPlan::ParameterGather::When::AfterStep;
    const Time gather = !after ? per_device.gather_wait[d]
                        : d < plan.parameter_gather.per_device.size()
                            ? plan.parameter_gather.per_device[d]
                            : Time::zero();
    sm.parameter_gather = std::max(sm.parameter_gather, gather);
    const Time opt_end = sync_end + opt + (after ? gather : Time::zero());
    sm.optimizer_end_per_device[d] = opt_end;
    m.makespan = std::max(m.makespan, opt_end);
  }
  sm.exposed_dp_sync = last_sync > sm.compute_end ? last_sync - sm.compute_end : Time::zero();
}

}  // namespace bubblesim
