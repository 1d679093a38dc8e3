#include "sim/engine/gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>

#include "schedules/table_index.h"
#include "sim/engine/gradient_sync_state.h"

namespace bubblesim {

GradientSync::Impl::Impl(const SyncPlan& p, const Table& t, const Topology& topo, FlowPort& fp,
                         const std::vector<EngineObserver*>& obs)
    : plan(p), table(t), index(t), topology(topo), port(fp), observers(obs) {
  const auto devices = static_cast<std::size_t>(table.devices);
  per_device.first_compute.assign(devices, -1);
  per_device.last_compute.assign(devices, -1);
  per_device.gather_due.assign(devices, std::nullopt);
  per_device.gather_wait.assign(devices, Time::zero());
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
      if (stream_of(op.kind) == Stream::Compute) {
        per_device.last_compute[d] = pos;
        if (per_device.first_compute[d] < 0) per_device.first_compute[d] = pos;
      }
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
  // The stage's own bucket size (zero: one bucket of everything), and DDP's small last bucket.
  std::int64_t bucket = plan.end.bucket.count();
  if (s < plan.end.stage_bucket.size()) bucket = plan.end.stage_bucket[s].count();
  if (bucket <= 0) bucket = std::max<std::int64_t>(total.count(), 1);
  const std::int64_t last =
      plan.end.last_bucket.count() > 0 && total.count() > plan.end.last_bucket.count()
          ? plan.end.last_bucket.count()
          : 0;
  LaneState& ls = stages[s].lanes[lane];
  ls.bytes = total;
  auto add = [&](std::int64_t bytes) {
    Unit u;
    u.stage = static_cast<std::int32_t>(s);
    u.bucket = static_cast<std::int32_t>(ls.units.size());
    u.lane = lane;
    u.bytes = Bytes(bytes);
    ls.units.push_back(units.size());
    units.push_back(u);
  };
  const std::int64_t body = total.count() - last;
  for (std::int64_t off = 0; off < body; off += bucket) add(std::min(bucket, body - off));
  if (last > 0) add(last);
}

SyncPlan::Ready GradientSync::Impl::readiness(std::size_t s) const {
  if (s < plan.end.ready.size()) return plan.end.ready[s];
  return plan.overlap.buckets ? SyncPlan::Ready::DuringBackward : SyncPlan::Ready::AfterCompute;
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
                                         CollectiveAlgorithm algorithm) {
  const auto id = static_cast<std::uint32_t>(instances.list.size());
  const CollectiveKind kind =
      units[u].phase == Phase::DataParallel ? plan.end.kind : CollectiveKind::AllReduce;
  auto steps = collective_steps(kind, algorithm, units[u].bytes.as_double(),
                                node_of_gpus(topology, ranks), plan.collective.ring_steps);
  instances.list.push_back(
      std::make_unique<CollectiveInstance>(topology, std::move(ranks), std::move(steps)));
  instances.unit.push_back(u);
  instances.device.push_back(device);
  instances.reported.push_back(report);
  units[u].instances.push_back(id);
  ++units[u].pending;
  return id;
}

Time GradientSync::Impl::closed_form(const Unit& unit, Phase phase,
                                     const std::vector<VertexId>& ranks,
                                     CollectiveAlgorithm algorithm) {
  // The alpha-beta parameters of a stage's group are measured once (per lane: the experts'
  // group differs).
  auto key = std::make_pair(unit.stage, static_cast<int>(phase) + 4 * static_cast<int>(unit.lane));
  auto it = cache.closed.find(key);
  if (it == cache.closed.end()) {
    std::vector<std::int32_t> node = node_of_gpus(topology, ranks);
    std::sort(node.begin(), node.end());
    auto nodes = static_cast<std::int32_t>(std::unique(node.begin(), node.end()) - node.begin());
    AlphaBeta ab = measure_alpha_beta(topology, ranks);
    it = cache.closed.emplace(key, std::make_pair(Time::zero(), nodes)).first;
    cache.alpha_beta[key] = ab;
  }
  const CollectiveKind kind =
      phase == Phase::DataParallel ? plan.end.kind : CollectiveKind::AllReduce;
  return collective_closed_form(kind, algorithm, unit.bytes.as_double(),
                                static_cast<std::int32_t>(ranks.size()), it->second.second,
                                cache.alpha_beta[key]);
}

void GradientSync::Impl::start_phase(std::size_t u, Time now) {
  Unit& unit = units[u];
  StageState& st = stages[static_cast<std::size_t>(unit.stage)];
  LaneState& lane = st.lanes[unit.lane];
  while (unit.phase != Phase::Done) {
    unit.instances.clear();
    unit.pending = 0;
    unit.phase_start = now;
    if (unit.phase == Phase::Replica && has_replica_phase(st)) {
      for (std::int32_t t = 0; t < tp(); ++t) {
        std::vector<VertexId> ranks;
        for (std::int32_t h : st.holders)
          ranks.push_back(plan.gpus[static_cast<std::size_t>(h)][0][static_cast<std::size_t>(t)]);
        if (t == 0)
          lane.replica_closed +=
              closed_form(unit, Phase::Replica, ranks, CollectiveAlgorithm::Ring);
        launch(u, st.holders.front(), t == 0, std::move(ranks), CollectiveAlgorithm::Ring);
      }
    } else if (unit.phase == Phase::DataParallel && plan.end.runs) {
      for (std::int32_t h : st.holders) {
        std::vector<std::vector<VertexId>> groups = dp_groups(unit, h);
        for (std::size_t g = 0; g < groups.size(); ++g) {
          if (groups[g].size() <= 1) continue;  // a GPU alone holds these parameters
          if (g == 0 && h == st.holders.front())
            lane.dp_closed +=
                closed_form(unit, Phase::DataParallel, groups[g], plan.collective.algorithm);
          launch(u, h, g == 0, std::move(groups[g]), plan.collective.algorithm);
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
        fmt::format("{}{} {} stage {} bucket {}", unit.lane == kExperts ? "expert " : "",
                    unit.phase == Phase::Replica ? "replica" : "dp",
                    collective_kind_name(unit.phase == Phase::Replica ? CollectiveKind::AllReduce
                                                                      : plan.end.kind),
                    unit.stage, unit.bucket);
    e.device = instances.device[id];
    e.start = c.start_time();
    e.end = c.end_time();
    e.bytes = unit.bytes;
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

Time GradientSync::first_op_ready(std::int32_t device, Time now, Time stream_free) {
  const auto d = static_cast<std::size_t>(device);
  std::optional<Time>& due = impl_->per_device.gather_due[d];
  if (!due) {
    const SyncPlan& plan = impl_->plan;
    const Time gather =
        d < plan.parameter_gather.per_device.size() &&
                plan.parameter_gather.when != SyncPlan::ParameterGather::When::AfterStep
            ? plan.parameter_gather.per_device[d]
            : Time::zero();
    const Time launched = plan.parameter_gather.when == SyncPlan::ParameterGather::When::AtStepStart
                              ? stream_free
                              : now;
    due = launched + gather;
    if (*due > now && !impl_->observers.empty()) {
      CollectiveEvent e;
      e.name = "parameter all-gather before the first forward (exposed)";
      e.device = device;
      e.start = now;
      e.end = *due;
      for (EngineObserver* o : impl_->observers) o->on_collective(e);
    }
    impl_->per_device.gather_wait[d] = std::max(Time::zero(), *due - now);
  }
  return std::max(now, *due);
}

std::int32_t GradientSync::first_compute(std::int32_t device) const {
  return impl_->per_device.first_compute[static_cast<std::size_t>(device)];
}

std::vector<Time> SyncPlan::step_after_sync() const {
  std::vector<Time> out = optimizer;
  if (parameter_gather.when == ParameterGather::When::AfterStep) {
    for (std::size_t d = 0; d < out.size() && d < parameter_gather.per_device.size(); ++d)
      out[d] += parameter_gather.per_device[d];
  }
  return out;
}

std::vector<std::int32_t> GradientSync::take_rate_changes() {
  std::vector<std::int32_t> out;
  out.swap(impl_->rate_changes);
  return out;
}
void GradientSync::finish(Metrics& metrics, bool completed) { impl_->finish(metrics, completed); }

}  // namespace bubblesim
