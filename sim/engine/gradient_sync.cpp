#include "sim/engine/gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "schedules/table_index.h"
#include "sim/engine/flow_network.h"

namespace bubblesim {
namespace {

enum class Phase { Replica, DataParallel, Done };

struct Unit {
  std::int32_t stage = 0;
  std::int32_t bucket = 0;
  Bytes bytes;
  std::int32_t ready_count = 0;
  bool ready = false;
  Phase phase = Phase::Replica;
  std::int32_t pending = 0;
  Time phase_start;
  std::vector<std::uint32_t> instances;
};

struct StageState {
  std::vector<std::int32_t> holders;  // devices holding the stage, ascending
  std::vector<std::size_t> units;     // indices into units_, bucket order
  std::size_t cursor = 0;
  bool busy = false;
  Time end;
  Time replica_time, dp_time;
  Time replica_closed, dp_closed;
};

}  // namespace

struct GradientSync::Impl {
  const SyncPlan& plan;
  const Table& table;
  const Topology& topology;
  FlowPort& port;
  const std::vector<EngineObserver*>& observers;
  std::map<std::pair<VertexId, VertexId>, Route> routes;

  std::vector<StageState> stages;
  std::vector<Unit> units;
  std::vector<std::unique_ptr<CollectiveInstance>> instances;
  std::vector<std::size_t> instance_unit;
  std::vector<std::int32_t> instance_device;  // holder device the instance belongs to
  std::vector<bool> instance_reported;  // the holder's tp-rank-0 instance: reported to observers
  std::vector<std::pair<std::size_t, bool>> ready_events;  // (unit, unused)
  std::vector<std::int32_t> last_compute;  // per device: position of its last compute op
  std::vector<Time> compute_end;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::int32_t>>
      last_grad;  // (device, pos) -> stages
  std::vector<Time> tp_per_device;
  std::map<std::pair<std::int32_t, int>, std::pair<Time, std::int32_t>> closed_cache;

  Impl(const SyncPlan& p, const Table& t, const Topology& topo, FlowPort& fp,
       const std::vector<EngineObserver*>& obs)
      : plan(p), table(t), topology(topo), port(fp), observers(obs) {
    const auto devices = static_cast<std::size_t>(table.devices);
    TableIndex index(table);
    last_compute.assign(devices, -1);
    compute_end.assign(devices, Time::zero());
    tp_per_device.assign(devices, Time::zero());
    stages.resize(static_cast<std::size_t>(table.stages));
    for (const auto& map : table.placement.device_of_stage) {
      for (std::size_t s = 0; s < map.size(); ++s) stages[s].holders.push_back(map[s]);
    }
    for (StageState& st : stages) {
      std::sort(st.holders.begin(), st.holders.end());
      st.holders.erase(std::unique(st.holders.begin(), st.holders.end()), st.holders.end());
    }
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
            tp_per_device[d] += tp_of(plan.tp_backward, op.stage);
            break;
          case OpKind::ForwardBackward:
            if (!index.has_weight(op.backward_stage, op.backward_microbatch))
              last[op.backward_stage] = pos;
            tp_per_device[d] +=
                tp_of(plan.tp_forward, op.stage) + tp_of(plan.tp_backward, op.backward_stage);
            break;
          case OpKind::Forward:
            tp_per_device[d] += tp_of(plan.tp_forward, op.stage);
            break;
          case OpKind::Recompute:
            tp_per_device[d] += tp_of(plan.tp_forward, op.stage);
            break;
          default:
            break;
        }
        if (stream_of(op.kind) == Stream::Compute) last_compute[d] = pos;
      }
      for (const auto& [s, pos] : last) last_grad[{static_cast<std::int32_t>(d), pos}].push_back(s);
    }
    // Buckets per stage.
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const Bytes total = s < plan.gradient_bytes.size() ? plan.gradient_bytes[s] : Bytes::zero();
      const std::int64_t bucket = std::max<std::int64_t>(plan.bucket.count(), 1);
      for (std::int64_t off = 0, b = 0; off < total.count(); off += bucket, ++b) {
        Unit u;
        u.stage = static_cast<std::int32_t>(s);
        u.bucket = static_cast<std::int32_t>(b);
        u.bytes = Bytes(std::min(bucket, total.count() - off));
        stages[s].units.push_back(units.size());
        units.push_back(u);
      }
    }
  }

  bool has_replica_phase(const StageState& st) const {
    return plan.replica_sync && st.holders.size() > 1;
  }
  std::int32_t dp() const {
    return plan.gpus.empty() ? 1 : static_cast<std::int32_t>(plan.gpus.front().size());
  }
  std::int32_t tp() const {
    return plan.gpus.empty() || plan.gpus.front().empty()
               ? 1
               : static_cast<std::int32_t>(plan.gpus.front().front().size());
  }

  std::uint32_t launch(std::size_t u, std::int32_t device, bool report, std::vector<VertexId> ranks,
                       CollectiveAlgorithm algorithm) {
    const auto id = static_cast<std::uint32_t>(instances.size());
    auto steps = collective_steps(CollectiveKind::AllReduce, algorithm, units[u].bytes.as_double(),
                                  node_of_gpus(topology, ranks));
    instances.push_back(
        std::make_unique<CollectiveInstance>(topology, std::move(ranks), std::move(steps)));
    instance_unit.push_back(u);
    instance_device.push_back(device);
    instance_reported.push_back(report);
    units[u].instances.push_back(id);
    ++units[u].pending;
    return id;
  }

  Time closed_form(std::int32_t s, Phase phase, const std::vector<VertexId>& ranks,
                   CollectiveAlgorithm algorithm, Bytes bytes) {
    // The alpha-beta parameters of a stage's group are measured once.
    auto key = std::make_pair(s, static_cast<int>(phase));
    auto it = closed_cache.find(key);
    if (it == closed_cache.end()) {
      std::vector<std::int32_t> node = node_of_gpus(topology, ranks);
      std::sort(node.begin(), node.end());
      auto nodes = static_cast<std::int32_t>(std::unique(node.begin(), node.end()) - node.begin());
      AlphaBeta ab = measure_alpha_beta(topology, ranks);
      it = closed_cache.emplace(key, std::make_pair(Time::zero(), nodes)).first;
      ab_cache[key] = ab;
    }
    return collective_closed_form(CollectiveKind::AllReduce, algorithm, bytes.as_double(),
                                  static_cast<std::int32_t>(ranks.size()), it->second.second,
                                  ab_cache[key]);
  }
  std::map<std::pair<std::int32_t, int>, AlphaBeta> ab_cache;

  void start_phase(std::size_t u, Time now) {
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
          if (t == 0)
            st.replica_closed += closed_form(unit.stage, Phase::Replica, ranks,
                                             CollectiveAlgorithm::Ring, unit.bytes);
          launch(u, st.holders.front(), t == 0, std::move(ranks), CollectiveAlgorithm::Ring);
        }
      } else if (unit.phase == Phase::DataParallel && dp() > 1) {
        for (std::int32_t h : st.holders) {
          for (std::int32_t t = 0; t < tp(); ++t) {
            std::vector<VertexId> ranks;
            for (std::int32_t r = 0; r < dp(); ++r) {
              ranks.push_back(plan.gpus[static_cast<std::size_t>(h)][static_cast<std::size_t>(r)]
                                       [static_cast<std::size_t>(t)]);
            }
            if (t == 0 && h == st.holders.front()) {
              st.dp_closed +=
                  closed_form(unit.stage, Phase::DataParallel, ranks, plan.algorithm, unit.bytes);
            }
            launch(u, h, t == 0, std::move(ranks), plan.algorithm);
          }
        }
      }
      // Start them (a collective over one rank is done at once).
      const std::vector<std::uint32_t> ids = unit.instances;
      for (std::uint32_t id : ids) {
        if (instances[id]->start(port, id, now, routes)) instance_done(id, now);
      }
      if (unit.pending > 0) return;
      end_phase(u, now);  // nothing to do in this phase
    }
  }

  void end_phase(std::size_t u, Time now) {
    Unit& unit = units[u];
    StageState& st = stages[static_cast<std::size_t>(unit.stage)];
    if (unit.phase == Phase::Replica) {
      st.replica_time += now - unit.phase_start;
      unit.phase = Phase::DataParallel;
    } else if (unit.phase == Phase::DataParallel) {
      st.dp_time += now - unit.phase_start;
      unit.phase = Phase::Done;
    }
  }

  void instance_done(std::uint32_t id, Time now) {
    const std::size_t u = instance_unit[id];
    Unit& unit = units[u];
    if (instance_reported[id] && !observers.empty()) {
      const CollectiveInstance& c = *instances[id];
      CollectiveEvent e;
      e.name =
          fmt::format("{} all-reduce stage {} bucket {}",
                      unit.phase == Phase::Replica ? "replica" : "dp", unit.stage, unit.bucket);
      e.device = instance_device[id];
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
    (void)now;
  }

  void advance(std::int32_t s, Time now) {
    StageState& st = stages[static_cast<std::size_t>(s)];
    while (!st.busy && st.cursor < st.units.size() && units[st.units[st.cursor]].ready) {
      const std::size_t u = st.units[st.cursor];
      st.busy = true;
      start_phase(u, now);
      if (units[u].phase != Phase::Done) return;
      unit_finished(u, now);
    }
  }

  void unit_finished(std::size_t u, Time now) {
    StageState& st = stages[static_cast<std::size_t>(units[u].stage)];
    st.busy = false;
    ++st.cursor;
    st.end = now;
  }

  void on_token(std::uint32_t token, Time now) {
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
    if (!instances[token]->on_arrival(port, token, now, routes)) return;
    instance_done(token, now);
    const std::size_t u = instance_unit[token];
    if (units[u].pending > 0) return;
    end_phase(u, now);
    if (units[u].phase != Phase::Done) {
      start_phase(u, now);
      if (units[u].phase != Phase::Done) return;
    }
    unit_finished(u, now);
    advance(units[u].stage, now);
  }

  void ready_at(std::size_t u, Time at) {
    const auto id = static_cast<std::uint32_t>(ready_events.size());
    ready_events.emplace_back(u, false);
    port.add_timer(at, kReadyBit | id);
  }

  void on_compute_start(std::int32_t device, std::int32_t position, Time start, Time end) {
    const auto d = static_cast<std::size_t>(device);
    if (!observers.empty() && (!plan.tp_forward.empty() || !plan.tp_backward.empty()))
      report_tp(device, position, end);
    if (plan.overlap) {
      auto it = last_grad.find({device, position});
      if (it != last_grad.end()) {
        for (std::int32_t s : it->second) {
          const auto& us = stages[static_cast<std::size_t>(s)].units;
          const auto k = static_cast<std::int64_t>(us.size());
          for (std::int64_t b = 0; b < k; ++b) {
            ready_at(us[static_cast<std::size_t>(b)],
                     start + Time::from_ps((end - start).ps() * (b + 1) / k));
          }
        }
      }
    }
    if (position == last_compute[d]) {
      compute_end[d] = end;
      if (!plan.overlap) {
        for (std::size_t s = 0; s < stages.size(); ++s) {
          const auto& h = stages[s].holders;
          if (std::find(h.begin(), h.end(), device) == h.end()) continue;
          for (std::size_t u : stages[s].units) ready_at(u, end);
        }
      }
    }
  }

  void report_tp(std::int32_t device, std::int32_t position, Time end) {
    const Op& op =
        table.device_ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(position)];
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

  void finish(Metrics& m, bool completed) {
    SyncMetrics& sm = m.sync;
    sm.enabled = true;
    sm.collectives = plan.tp_summaries;
    const auto devices = static_cast<std::size_t>(table.devices);
    for (std::size_t d = 0; d < devices; ++d) sm.tp_comm = std::max(sm.tp_comm, tp_per_device[d]);
    if (!completed) return;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const StageState& st = stages[s];
      sm.dp_sync = std::max(sm.dp_sync, st.dp_time);
      sm.replica_sync = std::max(sm.replica_sync, st.replica_time);
      if (st.units.empty()) continue;
      const Bytes total = plan.gradient_bytes[s];
      const auto count = static_cast<std::int32_t>(st.units.size());
      if (has_replica_phase(st)) {
        sm.collectives.push_back(
            CollectiveSummary{fmt::format("replica all-reduce stage {}", s), "ring",
                              static_cast<std::int32_t>(st.holders.size()), count, total,
                              st.replica_time, st.replica_closed});
      }
      if (dp() > 1) {
        sm.collectives.push_back(
            CollectiveSummary{fmt::format("dp all-reduce stage {}", s),
                              std::string(collective_algorithm_name(plan.algorithm)), dp(), count,
                              total, st.dp_time, st.dp_closed});
      }
    }
    for (Time t : compute_end) sm.compute_end = std::max(sm.compute_end, t);
    sm.sync_end_per_device.assign(devices, Time::zero());
    sm.optimizer_end_per_device.assign(devices, Time::zero());
    Time last_sync;
    for (std::size_t d = 0; d < devices; ++d) {
      Time sync_end = compute_end[d];
      for (const StageState& st : stages) {
        if (std::find(st.holders.begin(), st.holders.end(), static_cast<std::int32_t>(d)) !=
                st.holders.end() &&
            !st.units.empty()) {
          sync_end = std::max(sync_end, st.end);
        }
      }
      sm.sync_end_per_device[d] = sync_end;
      last_sync = std::max(last_sync, sync_end);
      const Time opt = d < plan.optimizer.size() ? plan.optimizer[d] : Time::zero();
      sm.optimizer = std::max(sm.optimizer, opt);
      const Time opt_end = sync_end + opt;
      sm.optimizer_end_per_device[d] = opt_end;
      m.makespan = std::max(m.makespan, opt_end);
      if (opt > Time::zero() && !observers.empty()) {
        CollectiveEvent e;
        e.name = "optimizer step";
        e.device = static_cast<std::int32_t>(d);
        e.start = sync_end;
        e.end = opt_end;
        for (EngineObserver* o : observers) o->on_collective(e);
      }
    }
    sm.exposed_dp_sync = last_sync > sm.compute_end ? last_sync - sm.compute_end : Time::zero();
  }
};

GradientSync::GradientSync(const SyncPlan& plan, const Table& table, const Topology& topology,
                           FlowPort& port, const std::vector<EngineObserver*>& observers)
    : impl_(std::make_unique<Impl>(plan, table, topology, port, observers)) {}
GradientSync::~GradientSync() = default;

void GradientSync::on_compute_start(std::int32_t device, std::int32_t position, Time start,
                                    Time end) {
  impl_->on_compute_start(device, position, start, end);
}
void GradientSync::on_token(std::uint32_t token, Time now) { impl_->on_token(token, now); }
void GradientSync::finish(Metrics& metrics, bool completed) { impl_->finish(metrics, completed); }

std::vector<LinkClassUsage> link_class_usage(const Topology& topology, const FlowNetwork& network) {
  std::map<std::string, LinkClassUsage> classes;
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const Time busy = network.link_busy_time(l);
    if (busy <= Time::zero()) continue;
    std::string a(vertex_kind_name(topology.vertex_kind(topology.link_source(l))));
    std::string b(vertex_kind_name(topology.vertex_kind(topology.link_target(l))));
    if (b < a) std::swap(a, b);
    LinkClassUsage& c = classes[a + "-" + b];
    c.name = a + "-" + b;
    c.busy += busy;
    c.bytes += Bytes(static_cast<std::int64_t>(network.link_bytes(l) + 0.5));
  }
  std::vector<LinkClassUsage> out;
  for (auto& [name, c] : classes) out.push_back(std::move(c));
  return out;
}

}  // namespace bubblesim
