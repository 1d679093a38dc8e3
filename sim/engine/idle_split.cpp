#include "sim/engine/idle_split.h"

#include <algorithm>

#include "schedules/a2a_exposure.h"
#include "sim/engine/component_kind.h"

namespace bubblesim {
namespace {

Time at(const std::vector<Time>& v, std::size_t d) { return d < v.size() ? v[d] : Time::zero(); }

/// The exposed all-to-all of each device: as replayed when it ran as flows, else from the costs
/// (only when some stage has one: a2a_per_device indexes the whole table).
std::vector<Time> exposed_a2a(const Table& table, const std::vector<StageCost>& costs,
                              const Metrics& m, std::size_t devices) {
  std::vector<Time> out(devices, Time::zero());
  if (!m.a2a.exposed_per_device.empty()) {
    for (std::size_t d = 0; d < devices; ++d) out[d] = at(m.a2a.exposed_per_device, d);
    return out;
  }
  const bool any = std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward_exposed + c.moe.a2a_backward_exposed > Time::zero();
  });
  if (!any || table.device_ops.size() != devices) return out;
  const std::vector<A2aTime> per = a2a_per_device(table, costs);
  for (std::size_t d = 0; d < devices && d < per.size(); ++d) out[d] = per[d].exposed;
  return out;
}

/// The end of each device's last compute op, from the per-op timings (zero without them).
std::vector<Time> compute_ends(const Table& table, const OpTimings& timings, std::size_t devices) {
  std::vector<Time> out(devices, Time::zero());
  if (timings.size() != devices || table.device_ops.size() != devices) return out;
  for (std::size_t d = 0; d < devices; ++d) {
    const auto row = timings[d];
    for (std::size_t i = 0; i < row.size() && i < table.device_ops[d].size(); ++i) {
      if (stream_of(table.device_ops[d][i].kind) == Stream::Compute && row[i].end > out[d])
        out[d] = row[i].end;
    }
  }
  return out;
}

}  // namespace

double IdleSplit::total_seconds(const std::vector<Time>& part) {
  long double sum = 0;  // exact below 2^64 ps, then rounded once as Time::seconds() rounds
  for (Time t : part) sum += static_cast<long double>(t.ps());
  return static_cast<double>(sum) * 1e-12;
}

IdleSplit idle_split(const Table& table, const std::vector<StageCost>& stage_costs,
                     const SimulationResult& result) {
  const Metrics& m = result.metrics;
  const std::size_t devices = m.busy_per_device.size();
  IdleSplit s;
  for (auto* part : {&s.bubble, &s.imbalance, &s.p2p, &s.collectives, &s.all_to_all, &s.idle})
    part->assign(devices, Time::zero());
  const std::vector<Time> a2a = exposed_a2a(table, stage_costs, m, devices);
  const std::vector<Time> ends =
      m.sync.enabled ? compute_ends(table, result.timings, devices) : std::vector<Time>(devices);
  // What the behaviours add to the point-to-point part (host gaps: component_kind.h).
  std::vector<Time> behaviour_p2p(devices, Time::zero());
  for (const ComponentKind& kind : builtin_components()) {
    if (kind.p2p_idle == nullptr) continue;
    const std::vector<Time> idle = kind.p2p_idle(m);
    for (std::size_t d = 0; d < devices; ++d) behaviour_p2p[d] += at(idle, d);
  }
  Time busiest;
  for (Time b : m.busy_per_device) busiest = std::max(busiest, b);
  for (std::size_t d = 0; d < devices; ++d) {
    const Time busy = m.busy_per_device[d];
    s.idle[d] = m.makespan - std::min(busy, m.makespan) + std::min(a2a[d], busy);
    Time left = s.idle[d];
    auto take = [&](Time want) {
      const Time t = std::clamp(want, Time::zero(), left);
      left -= t;
      return t;
    };
    s.all_to_all[d] = take(a2a[d]);
    s.p2p[d] = take(at(m.comm.exposed_comm_per_device, d) + at(behaviour_p2p, d));
    const Time end = ends[d];
    const Time synced = at(m.sync.optimizer_end_per_device, d);
    s.collectives[d] = take(m.sync.enabled && synced > end ? synced - end : Time::zero());
    s.imbalance[d] = take(busiest - busy);
    s.bubble[d] = left;
  }
  return s;
}

}  // namespace bubblesim
