#include "sim/engine/gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>

#include "schedules/table_index.h"
#include "sim/engine/gradient_sync_state.h"

namespace bubblesim {

GradientSync::Impl::Impl(const SyncPlan& p, const Table& t, const Topology& topo, FlowPort& fp,
                         const std::vector<EngineObserver*>& obs)
    : plan(p),
      table(t),
      index(t),
      topology(topo),
      port(fp),
      observers(obs),
      planner(topo, p.collective) {
  const auto devices = static_cast<std::size_t>(table.devices);
  per_device.last_compute.assign(devices, -1);
  per_device.compute_end.assign(devices, Time::zero());
  per_device.tp.assign(devices, Time::zero());
  per_device.in_flight.assign(devices, 0);
  stages.resize(static_cast<std::size_t>(table.stages));
  for (std::size_t s = 0; s < stages.size(); ++s)
    stages[s].holders = table.placement.holders_of(static_cast<std::int32_t>(s));
  auto tp_of = [&](const std::vector<Time>& v, std::int32_t s) {
    return v.empty() ? Time::zero() : v[static_cast<std::size_t>(s)];
  };
  for (std::size_t d = 0; d < devices; ++d) {
    std::map<std::int32_t, std::int32_t> last;  // stage -> position of its last gradient op
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      const Op& op = table.device_ops[d][i];
      const auto pos = static_cast<std::int32_t>(i);
      switch (op.kind) {
        case OpKind::Weight:
          last[op.stage] = pos;
          break;
        case OpKind::Backward:
          if (!index.has_weight(op.stage, op.microbatch)) last[op.stage] = pos;
          per_device.tp[d] += tp_of(plan.tp_backward, op.stage);
          break;
        case OpKind::ForwardBackward:
          if (!index.has_weight(op.backward_stage, op.backward_microbatch))
            last[op.backward_stage] = pos;
          per_device.tp[d] +=
              tp_of(plan.tp_forward, op.stage) + tp_of(plan.tp_backward, op.backward_stage);
          break;
        case OpKind::Forward:
          per_device.tp[d] += tp_of(plan.tp_forward, op.stage);
          break;
        case OpKind::Recompute:
          per_device.tp[d] += tp_of(plan.tp_forward, op.stage);
          break;
        default:
          break;
      }
      if (stream_of(op.kind) == Stream::Compute) per_device.last_compute[d] = pos;
    }
    for (const auto& [s, pos] : last) last_grad[{static_cast<std::int32_t>(d), pos}].push_back(s);
  }
  // Buckets per stage: the dense parameters', then the routed experts' (their own communicator).
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Bytes total = s < plan.gradient_bytes.size() ? plan.gradient_bytes[s] : Bytes::zero();
    const Bytes experts = s < plan.experts.gradient_bytes.size()
                              ? std::min(plan.experts.gradient_bytes[s], total)
                              : Bytes::zero();
    add_buckets(s, kDense, total - experts);
    add_buckets(s, kExperts, experts);
  }
}

void GradientSync::Impl::add_buckets(std::size_t s, Lane lane, Bytes total) {
  const std::int64_t bucket = std::max<std::int64_t>(plan.bucket.count(), 1);
  LaneState& ls = stages[s].lanes[lane];
  ls.bytes = total;
  for (std::int64_t off = 0, b = 0; off < total.count(); off += bucket, ++b) {
    Unit u;
    u.stage = static_cast<std::int32_t>(s);
    u.bucket = static_cast<std::int32_t>(b);
    u.lane = lane;
    u.bytes = Bytes(std::min(bucket, total.count() - off));
    ls.units.push_back(units.size());
    units.push_back(u);
  }
}

std::vector<std::vector<VertexId>> GradientSync::Impl::dp_groups(const Unit& unit,
                                                                 std::int32_t h) const {
  const auto d = static_cast<std::size_t>(h);
  if (unit.lane == kExperts) return plan.experts.groups[d];
  std::vector<std::vector<VertexId>> groups;  // one per TP rank, over the dp replicas
  if (dp() <= 1) return groups;
  for (std::int32_t t = 0; t < tp(); ++t) {
    std::vector<VertexId> ranks;
    for (std::int32_t r = 0; r < dp(); ++r)
      ranks.push_back(plan.gpus[d][static_cast<std::size_t>(r)][static_cast<std::size_t>(t)]);
    groups.push_back(std::move(ranks));
  }
  return groups;
}

std::int32_t GradientSync::Impl::dp_group_size(Lane lane, std::int32_t h) const {
  if (lane == kDense) return dp();
  const auto& groups = plan.experts.groups[static_cast<std::size_t>(h)];
  return groups.empty() ? 0 : static_cast<std::int32_t>(groups.front().size());
}

bool GradientSync::Impl::has_replica_phase(const StageState& st) const {
  return plan.replica_sync && st.holders.size() > 1;
}

std::int32_t GradientSync::Impl::dp() const {
  return plan.gpus.empty() ? 1 : static_cast<std::int32_t>(plan.gpus.front().size());
}

std::int32_t GradientSync::Impl::tp() const {
  return plan.gpus.empty() || plan.gpus.front().empty()
             ? 1
             : static_cast<std::int32_t>(plan.gpus.front().front().size());
}

std::uint32_t GradientSync::Impl::launch(std::size_t u, std::int32_t device, bool report,
                                         std::vector<VertexId> ranks,
                                         std::optional<CollectiveAlgorithm> algorithm) {
  const auto id = static_cast<std::uint32_t>(instances.list.size());
  Unit& unit = units[u];
  const CollectiveKind kind =
      unit.phase == Phase::DataParallel ? plan.gradient_collective : CollectiveKind::AllReduce;
  const double bytes = unit.bytes.as_double();
  CollectivePlan p = planner.plan(ranks, kind, bytes, algorithm);
  const std::string name = plan_name(p);
  const double bus = bus_bytes(kind, bytes, static_cast<std::int32_t>(ranks.size()));
  if (report) {
    LaneState& lane = stages[static_cast<std::size_t>(unit.stage)].lanes[unit.lane];
    if (unit.phase == Phase::Replica) {
      lane.replica_closed += p.predicted;
    } else {
      lane.dp_closed += p.predicted;
      lane.dp_bus_bytes += bus;
      if (std::find(lane.algorithms.begin(), lane.algorithms.end(), name) == lane.algorithms.end())
        lane.algorithms.push_back(name);
    }
  }
  instances.list.push_back(std::make_unique<CollectiveInstance>(
      topology, std::move(p.layout.endpoints), std::move(p.layout.steps), p.timing));
  instances.unit.push_back(u);
  instances.device.push_back(device);
  instances.reported.push_back(report);
  instances.algorithm.push_back(name);
  instances.bus_bytes.push_back(bus);
  unit.instances.push_back(id);
  ++unit.pending;
  return id;
}

void GradientSync::Impl::start_phase(std::size_t u, Time now) {
  Unit& unit = units[u];
  StageState& st = stages[static_cast<std::size_t>(unit.stage)];
  while (unit.phase != Phase::Done) {
    unit.instances.clear();
    unit.pending = 0;
    unit.phase_start = now;
    if (unit.phase == Phase::Replica && has_replica_phase(st)) {
      for (std::int32_t t = 0; t < tp(); ++t) {
        std::vector<VertexId> ranks;
        for (std::int32_t h : st.holders)
          ranks.push_back(plan.gpus[static_cast<std::size_t>(h)][0][static_cast<std::size_t>(t)]);
        launch(u, st.holders.front(), t == 0, std::move(ranks), CollectiveAlgorithm::Ring);
      }
    } else if (unit.phase == Phase::DataParallel) {
      for (std::int32_t h : st.holders) {
        std::vector<std::vector<VertexId>> groups = dp_groups(unit, h);
        for (std::size_t g = 0; g < groups.size(); ++g) {
          if (groups[g].size() <= 1) continue;  // a GPU alone holds these parameters
          launch(u, h, g == 0 && h == st.holders.front(), std::move(groups[g]), std::nullopt);
        }
      }
    }
    // Start them (a collective over one rank is done at once).
    const std::vector<std::uint32_t> ids = unit.instances;
    for (std::uint32_t id : ids) {
      count_in_flight(instances.device[id], 1);
      if (instances.list[id]->start(port, id, now, cache.routes)) instance_done(id, now);
    }
    if (unit.pending > 0) return;
    end_phase(u, now);  // nothing to do in this phase
  }
}

void GradientSync::Impl::end_phase(std::size_t u, Time now) {
  Unit& unit = units[u];
  StageState& st = stages[static_cast<std::size_t>(unit.stage)];
  LaneState& lane = st.lanes[unit.lane];
  if (unit.phase == Phase::Replica) {
    lane.replica_time += now - unit.phase_start;
    unit.phase = Phase::DataParallel;
  } else if (unit.phase == Phase::DataParallel) {
    lane.dp_time += now - unit.phase_start;
    unit.phase = Phase::Done;
  }
}

void GradientSync::Impl::instance_done(std::uint32_t id, Time now) {
  const std::size_t u = instances.unit[id];
  Unit& unit = units[u];
  if (instances.reported[id] && !observers.empty()) {
    const CollectiveInstance& c = *instances.list[id];
    CollectiveEvent e;
    e.name =
        fmt::format("{}{} {} ({}) stage {} bucket {}", unit.lane == kExperts ? "expert " : "",
                    unit.phase == Phase::Replica ? "replica" : "dp",
                    collective_kind_name(unit.phase == Phase::Replica ? CollectiveKind::AllReduce
                                                                      : plan.gradient_collective),
                    instances.algorithm[id], unit.stage, unit.bucket);
    e.device = instances.device[id];
    e.start = c.start_time();
    e.end = c.end_time();
    e.bytes = unit.bytes;
    e.bus_bytes = instances.bus_bytes[id];
    for (const CollectiveLinkSlice& sl : c.link_slices()) {
      e.links.push_back(sl.link);
      e.link_start.push_back(sl.start);
      e.link_end.push_back(sl.end);
    }
    for (EngineObserver* o : observers) o->on_collective(e);
  }
  --unit.pending;
  count_in_flight(instances.device[id], -1);
  (void)now;
}

void GradientSync::Impl::count_in_flight(std::int32_t device, std::int32_t delta) {
  std::int32_t& n = per_device.in_flight[static_cast<std::size_t>(device)];
  const bool before = n > 0;
  n += delta;
  if (plan.overlap.sm_share > 0 && before != (n > 0)) {
    if (std::find(rate_changes.begin(), rate_changes.end(), device) == rate_changes.end())
      rate_changes.push_back(device);
  }
}

void GradientSync::Impl::advance(std::int32_t s, Time now) {
  for (LaneState& lane : stages[static_cast<std::size_t>(s)].lanes) {
    while (!lane.busy && lane.cursor < lane.units.size() && units[lane.units[lane.cursor]].ready) {
      const std::size_t u = lane.units[lane.cursor];
      lane.busy = true;
      start_phase(u, now);
      if (units[u].phase != Phase::Done) break;
      unit_finished(u, now);
    }
  }
}

void GradientSync::Impl::unit_finished(std::size_t u, Time now) {
  StageState& st = stages[static_cast<std::size_t>(units[u].stage)];
  LaneState& lane = st.lanes[units[u].lane];
  lane.busy = false;
  ++lane.cursor;
  st.end = std::max(st.end, now);
}

void GradientSync::Impl::on_token(std::uint32_t token, Time now) {
  if (token & kReadyBit) {
    const std::size_t u = ready_events[token & ~kReadyBit].first;
    Unit& unit = units[u];
    if (++unit.ready_count ==
        static_cast<std::int32_t>(stages[static_cast<std::size_t>(unit.stage)].holders.size())) {
      unit.ready = true;
      advance(unit.stage, now);
    }
    return;
  }
  if (!instances.list[token]->on_arrival(port, token, now, cache.routes)) return;
  instance_done(token, now);
  const std::size_t u = instances.unit[token];
  if (units[u].pending > 0) return;
  end_phase(u, now);
  if (units[u].phase != Phase::Done) {
    start_phase(u, now);
    if (units[u].phase != Phase::Done) return;
  }
  unit_finished(u, now);
  advance(units[u].stage, now);
}

void GradientSync::Impl::ready_at(std::size_t u, Time at) {
  const auto id = static_cast<std::uint32_t>(ready_events.size());
  ready_events.emplace_back(u, false);
  port.add_timer(at, kReadyBit | id);
}
GradientSync::GradientSync(const SyncPlan& plan, const Table& table, const Topology& topology,
                           FlowPort& port, const std::vector<EngineObserver*>& observers)
    : impl_(std::make_unique<Impl>(plan, table, topology, port, observers)) {}
GradientSync::~GradientSync() = default;

void GradientSync::on_compute_end(std::int32_t device, std::int32_t position, Time end) {
  const auto d = static_cast<std::size_t>(device);
  if (position == impl_->per_device.last_compute[d])
    impl_->per_device.compute_end[d] = std::max(impl_->per_device.compute_end[d], end);
}

void GradientSync::on_compute_start(std::int32_t device, std::int32_t position, Time start,
                                    Time end) {
  impl_->on_compute_start(device, position, start, end);
}
void GradientSync::on_token(std::uint32_t token, Time now) { impl_->on_token(token, now); }

double GradientSync::compute_rate(std::int32_t device) const {
  return impl_->per_device.in_flight[static_cast<std::size_t>(device)] > 0
             ? 1.0 - impl_->plan.overlap.sm_share
             : 1.0;
}

std::vector<std::int32_t> GradientSync::take_rate_changes() {
  std::vector<std::int32_t> out;
  out.swap(impl_->rate_changes);
  return out;
}
void GradientSync::finish(Metrics& metrics, bool completed) { impl_->finish(metrics, completed); }

}  // namespace bubblesim
