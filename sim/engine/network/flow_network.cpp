#include "sim/engine/network/flow_network.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <stdexcept>

namespace bubblesim {
namespace {

std::vector<double> capacities(const Topology& topology) {
  std::vector<double> capacity(static_cast<std::size_t>(topology.link_count()));
  for (LinkId l = 0; l < topology.link_count(); ++l)
    capacity[static_cast<std::size_t>(l)] = topology.link_bandwidth(l).bytes_per_second();
  return capacity;
}

const Topology& checked(const TopologyNetwork& spec, std::int32_t devices) {
  if (spec.topology == nullptr || spec.device_vertex.size() != static_cast<std::size_t>(devices)) {
    throw std::invalid_argument(
        "the topology network model needs a topology and one GPU vertex per device");
  }
  return *spec.topology;
}

}  // namespace

FlowNetwork::FlowNetwork(const TopologyNetwork& spec, std::int32_t devices,
                         std::vector<LinkFault> faults, std::optional<Bandwidth> offload_bandwidth,
                         FlowSymmetry symmetry)
    : NetworkModel(offload_bandwidth),
      topology_(checked(spec, devices)),
      device_vertex_(spec.device_vertex),
      // By class the flows go to ClassFlows: no per-link state here (a million links at 10^5
      // GPUs).
      flows_(symmetry.mode == "symmetric" ? std::vector<double>{} : capacities(topology_)) {
  faults_.list = std::move(faults);
  if (symmetry.mode == "symmetric") {
    if (!faults_.list.empty())
      throw std::invalid_argument(
          "flows by class cannot take link faults (a fault splits a class)");
    by_class_.flows = std::make_unique<ClassFlows>(capacities(topology_));
  }
  by_class_.symmetry = std::move(symmetry);
  const auto n = static_cast<std::size_t>(devices);
  for (const LinkFault& fault : faults_.list) {
    if (fault.link < 0 || fault.link >= topology_.link_count()) {
      throw std::invalid_argument("a link fault names a link the topology does not have");
    }
  }
  // Each GPU offloads to its nearest host vertex; the routes there and back are fixed.
  hosts_.host_of_device.assign(n, 0);
  routes_.d2h.assign(n, std::nullopt);
  routes_.h2d.assign(n, std::nullopt);
  std::vector<VertexId> host_vertex;
  for (std::size_t d = 0; d < n; ++d) {
    VertexId gpu = device_vertex_[d];
    std::optional<VertexId> host = topology_.nearest_host(gpu);
    if (!host) continue;
    auto it = std::find(host_vertex.begin(), host_vertex.end(), *host);
    hosts_.host_of_device[d] = static_cast<std::size_t>(it - host_vertex.begin());
    if (it == host_vertex.end()) {
      host_vertex.push_back(*host);
      hosts_.names.push_back(topology_.vertex_name(*host));
    }
    routes_.d2h[d] = topology_.route(gpu, *host);
    routes_.h2d[d] = topology_.route(*host, gpu);
  }
  if (hosts_.names.empty()) hosts_.names.push_back("host");
}

void FlowNetwork::begin(NetworkSink& sink) {
  NetworkModel::begin(sink);
  if (faults_.order.size() != faults_.list.size()) {
    faults_.order.resize(faults_.list.size());
    for (std::size_t f = 0; f < faults_.list.size(); ++f) faults_.order[f] = f;
    std::stable_sort(faults_.order.begin(), faults_.order.end(), [&](std::size_t a, std::size_t b) {
      return faults_.list[a].at < faults_.list[b].at;
    });
  }
}

// Faults are at absolute times of the whole run and change link capacities for good. They are
// applied lazily: when a flow starts, and at a check scheduled for the next fault while flows are
// in flight. A fault with nothing in flight is the same applied later, so a replay that ends
// (the last op of an iteration) leaves the rest for the next iteration's replay.
void FlowNetwork::apply_faults_until(Time now) {
  while (faults_.next < faults_.order.size() &&
         faults_.list[faults_.order[faults_.next]].at <= now) {
    const LinkFault& fault = faults_.list[faults_.order[faults_.next++]];
    flows_.set_link_capacity(fault.link, fault.bytes_per_second,
                             std::max(fault.at, flows_.last_update()));
  }
}

std::optional<Time> FlowNetwork::send(std::int32_t from, std::int32_t to, Bytes bytes,
                                      std::uint32_t token, Time now) {
  const std::optional<Route>& route = route_between(from, to);
  const Time latency = transfer_delay(from, to, route ? route->latency : Time::zero());
  if (!route || route->links.empty() || bytes <= Bytes::zero()) return now + latency;
  if (uncontended_.active) {
    return lone_transfer(pair_id(from, to), *route, bytes, now) + latency;
  }
  start_flow(route->links, bytes.as_double(), Pending{StalledFlow::Kind::Send, token, latency},
             now);
  return std::nullopt;
}

std::optional<Time> FlowNetwork::copy(std::int32_t device, CopyDirection direction, Bytes bytes,
                                      std::uint32_t token, Time now) {
  if (bytes > Bytes::zero()) {
    const auto d = static_cast<std::size_t>(device);
    const std::optional<Route>& route =
        direction == CopyDirection::DeviceToHost ? routes_.d2h[d] : routes_.h2d[d];
    if (route && !route->links.empty()) {
      start_flow(route->links, bytes.as_double(),
                 Pending{StalledFlow::Kind::Copy, token, copy_time(device, token, route->latency)},
                 now);
      return std::nullopt;
    }
  }
  return NetworkModel::copy(device, direction, bytes, token, now);
}

FlowPort* FlowNetwork::flow_port(std::uint8_t owner) {
  if (ports_.size() <= owner) ports_.resize(std::size_t{owner} + 1);
  if (!ports_[owner]) ports_[owner] = std::make_unique<OwnerPort>(*this, owner);
  return ports_[owner].get();
}

ShapePort* FlowNetwork::shape_port(std::uint8_t owner) {
  if (!by_class_.flows) return nullptr;
  flow_port(owner);
  return ports_[owner].get();
}

void FlowNetwork::start_flow(const std::vector<LinkId>& links, double bytes, Pending pending,
                             Time now, double weight) {
  if (by_class_.flows) {  // a shape of one flow: its latency is the launch's
    launch_shape(by_class_.flows->single(links, weight, now), bytes, pending, now);
    return;
  }
  apply_faults_until(now);
  const auto id = static_cast<std::size_t>(flows_.add(links, bytes, now, weight));
  if (pending_.size() <= id) pending_.resize(id + 1);
  pending_[id] = pending;
  schedule_check();
}

void FlowNetwork::launch_shape(std::int32_t shape, double scale, Pending pending, Time now) {
  const auto id =
      static_cast<std::size_t>(by_class_.flows->launch(shape, scale, pending.latency, now));
  if (by_class_.pending.size() <= id) by_class_.pending.resize(id + 1);
  by_class_.pending[id] = pending;
  schedule_check();
}

void FlowNetwork::hand_back(const Pending& p, std::uint32_t member, Time at, Time now) {
  switch (p.kind) {
    case StalledFlow::Kind::Component:
      sink_->component_token(p.owner, p.token + member, at);
      break;
    case StalledFlow::Kind::Copy:
      sink_->copy_finished(p.token, at);
      break;
    case StalledFlow::Kind::Send:
      sink_->transfer_arrived(p.token, at, now);
      break;
  }
}

std::size_t FlowNetwork::pair_id(std::int32_t from, std::int32_t to) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
                            static_cast<std::uint32_t>(to);
  auto [it, added] = routes_.id.try_emplace(key, routes_.pair.size());
  if (added) {
    routes_.pair.push_back(topology_.route(device_vertex_[static_cast<std::size_t>(from)],
                                           device_vertex_[static_cast<std::size_t>(to)]));
  }
  return it->second;
}

const std::optional<Route>& FlowNetwork::route_between(std::int32_t from, std::int32_t to) {
  return routes_.pair[pair_id(from, to)];
}

Time FlowNetwork::lone_transfer(std::size_t pair, const Route& route, Bytes bytes, Time now) {
  const Time finish = MaxMinFlows::finish_time(
      bytes.as_double(),
      pair < uncontended_.route_rate.size() ? uncontended_.route_rate[pair] : 0.0, now);
  for (LinkId l : route.links) {
    uncontended_.link_busy[static_cast<std::size_t>(l)] += finish - now;
    uncontended_.link_bytes[static_cast<std::size_t>(l)] += bytes.count();
    if (uncontended_.checked)
      uncontended_.link_intervals[static_cast<std::size_t>(l)].emplace_back(now.ps(), finish.ps());
  }
  return finish;
}

bool FlowNetwork::contention_free(const Table& table, const std::vector<StageCost>& costs,
                                  const OpDuration& duration) {
  if (!faults_.list.empty() || by_class_.flows) return false;
  constexpr std::size_t kNoPair = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> owner(static_cast<std::size_t>(topology_.link_count()), kNoPair);
  std::vector<Time> longest, shortest_sender;  // [pair id], grown as pairs appear
  std::vector<double> rate;
  std::array<std::size_t, 2> sent{};  // pairs the current op sends over
  std::size_t sends = 0;
  bool exclusive = true;  // no link shared by two pairs, no pair sending twice at once
  // A transfer of `bytes` from device `from` (op n) to the device of (s, j); the consumer is
  // assumed present (counting one too many only makes the answer more cautious).
  auto transfer = [&](std::int32_t from, std::uint32_t n, std::int32_t s, std::int32_t j,
                      Bytes bytes) {
    if (s < 0 || s >= table.stages || bytes <= Bytes::zero()) return true;
    const std::int32_t to = table.placement.device_of(s, j);
    if (to == from) return true;
    const std::size_t pair = pair_id(from, to);
    const std::optional<Route>& route = routes_.pair[pair];
    if (!route || route->links.empty()) return true;  // arrives after the latency, no flow
    if (rate.size() <= pair) {
      rate.resize(routes_.pair.size(), 0.0);
      longest.resize(routes_.pair.size(), Time::zero());
      shortest_sender.resize(routes_.pair.size(), Time::max());
    }
    if (std::find(sent.begin(), sent.begin() + static_cast<std::ptrdiff_t>(sends), pair) !=
        sent.begin() + static_cast<std::ptrdiff_t>(sends)) {
      exclusive = false;  // two sends at once on one route: the check after the replay sees it
    } else {
      sent[sends++] = pair;
    }
    if (rate[pair] == 0.0) {  // the pair's first transfer: claim its links
      double r = flows_.link_capacity(route->links.front());
      for (LinkId l : route->links) {
        r = std::min(r, flows_.link_capacity(l));
        std::size_t& o = owner[static_cast<std::size_t>(l)];
        if (o != kNoPair && o != pair) exclusive = false;  // a link shared by two pairs
        if (o == kNoPair) o = pair;
      }
      if (!(r > 0.0)) return false;
      rate[pair] = r;
    }
    const Time t = MaxMinFlows::finish_time(bytes.as_double(), rate[pair], Time::zero());
    if (t == Time::max()) return false;
    longest[pair] = std::max(longest[pair], t);
    shortest_sender[pair] = std::min(shortest_sender[pair], duration(from, n));
    return true;
  };
  auto cost = [&](std::int32_t s) -> const StageCost& {
    return costs[static_cast<std::size_t>(s)];
  };
  std::uint32_t n = 0;
  for (std::int32_t d = 0; d < table.devices; ++d) {
    for (const Op& op : table.device_ops[static_cast<std::size_t>(d)]) {
      if (stream_of(op.kind) != Stream::Compute) return false;  // copies: the event loop's
      sends = 0;
      // The only edges that cross devices (schedules/list_scheduling.h): F(s) -> F(s+1) and B(s) ->
      // B(s-1).
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward) {
        if (!transfer(d, n, op.stage + 1, op.microbatch, cost(op.stage).p2p)) return false;
      }
      const bool fused = op.kind == OpKind::ForwardBackward;
      if (op.kind == OpKind::Backward || fused) {
        const std::int32_t s = fused ? op.backward_stage : op.stage;
        const std::int32_t j = fused ? op.backward_microbatch : op.microbatch;
        if (s > 0 && !transfer(d, n, s - 1, j, cost(s - 1).p2p)) return false;
      }
      ++n;
    }
  }
  rate.resize(routes_.pair.size(), 0.0);  // pairs seen only through send() later: rate 0
  for (std::size_t pair = 0; pair < longest.size(); ++pair) {
    if (rate[pair] > 0.0 && !(longest[pair] < shortest_sender[pair])) exclusive = false;
  }
  uncontended_.active = true;
  uncontended_.route_rate = std::move(rate);
  const auto links = static_cast<std::size_t>(topology_.link_count());
  uncontended_.link_busy.assign(links, Time::zero());
  uncontended_.link_bytes.assign(links, 0);
  // Not proven: every lone transfer records its interval on each link of its route, and
  // contention_seen() looks for two that meet.
  uncontended_.checked = !exclusive;
  uncontended_.link_intervals.assign(uncontended_.checked ? links : 0, {});
  return true;
}

bool FlowNetwork::contention_seen() {
  if (!uncontended_.checked) return false;
  for (auto& intervals : uncontended_.link_intervals) {
    if (!std::is_sorted(intervals.begin(), intervals.end()))
      std::sort(intervals.begin(), intervals.end());
    std::int64_t busy_until = std::numeric_limits<std::int64_t>::min();
    for (const auto& [start, finish] : intervals) {
      // Meeting at an instant counts too: which of a finish and a start at the same time the
      // event loop handles first decides whether the two flows share.
      if (start <= busy_until) return true;
      busy_until = std::max(busy_until, finish);
    }
  }
  return false;
}

void FlowNetwork::schedule_check() {
  ++version_;
  std::optional<Time> t =
      by_class_.flows ? by_class_.flows->next_completion() : flows_.next_completion();
  if (faults_.next < faults_.order.size() && flows_.active_flows() > 0) {
    const Time fault = std::max(faults_.list[faults_.order[faults_.next]].at, flows_.last_update());
    t = t ? std::min(*t, fault) : fault;
  }
  if (t) sink_->schedule_network(*t, version_);
}

void FlowNetwork::on_event(std::uint32_t payload, Time now) {
  if (payload == version_) on_check(now);
}

void FlowNetwork::on_check(Time now) {
  if (by_class_.flows) {
    by_class_.arrivals.clear();
    by_class_.flows->complete_finished(now, by_class_.arrivals);
    for (const ClassFlows::Arrival& a : by_class_.arrivals) {
      const Pending p = by_class_.pending[static_cast<std::size_t>(a.launch)];
      hand_back(p, static_cast<std::uint32_t>(a.member), a.at, now);
    }
    schedule_check();
    return;
  }
  flows_.complete_finished(now, finished_);
  apply_faults_until(now);  // after the flows that finish at `now`: rates change from here on
  for (MaxMinFlows::FlowId f : finished_) {
    const Pending p = pending_[static_cast<std::size_t>(f)];  // a copy: the sink may add flows
    hand_back(p, 0, now + p.latency, now);
  }
  schedule_check();
}

void FlowNetwork::report(Metrics& metrics, bool sync) const {
  const ClassFlows* classes = by_class_.flows.get();
  auto busy_of = [&](LinkId l) {
    return classes != nullptr ? classes->link_busy_time(l) : flows_.link_busy_time(l);
  };
  auto bytes_of = [&](LinkId l) {
    return classes != nullptr ? classes->link_bytes(l) : flows_.link_bytes(l);
  };
  if (sync) metrics.sync.link_classes = link_class_usage(topology_, busy_of, bytes_of);
  for (LinkId l = 0; l < topology_.link_count(); ++l) {
    const auto i = static_cast<std::size_t>(l);
    const Time busy = uncontended_.active ? uncontended_.link_busy[i] : busy_of(l);
    if (busy <= Time::zero()) continue;
    const Bytes bytes = uncontended_.active ? Bytes(uncontended_.link_bytes[i])
                                            : Bytes(static_cast<std::int64_t>(bytes_of(l) + 0.5));
    metrics.comm.links.push_back(LinkUsage{topology_.link_name(l), busy, bytes});
  }
  FlowSymmetry& s = metrics.comm.symmetry = by_class_.symmetry;
  if (classes != nullptr) {
    const ClassFlows::Stats st = classes->stats();
    s.flows_laid_out = st.laid_out;
    s.flows_started = st.flows_started;
    s.classes_started = st.classes_started;
    s.flow_classes = st.flow_classes;
  }
}

std::vector<StalledFlow> FlowNetwork::stalled(std::size_t limit) const {
  std::vector<StalledFlow> out;
  if (by_class_.flows) {
    for (const auto& [launch, left] : by_class_.flows->in_flight()) {
      if (out.size() >= limit) break;
      const Pending& p = by_class_.pending[static_cast<std::size_t>(launch)];
      out.push_back(StalledFlow{p.kind, p.token, left, p.owner});
    }
    return out;
  }
  for (std::size_t f = 0; f < pending_.size() && out.size() < limit; ++f) {
    const auto id = static_cast<MaxMinFlows::FlowId>(f);
    if (!flows_.is_active(id)) continue;
    out.push_back(StalledFlow{pending_[f].kind, pending_[f].token, flows_.remaining_bytes(id),
                              pending_[f].owner});
  }
  return out;
}

std::vector<LinkClassUsage> link_class_usage(const Topology& topology, const MaxMinFlows& flows) {
  return link_class_usage(
      topology, [&](LinkId l) { return flows.link_busy_time(l); },
      [&](LinkId l) { return flows.link_bytes(l); });
}

std::vector<LinkClassUsage> link_class_usage(const Topology& topology,
                                             const std::function<Time(LinkId)>& busy_of,
                                             const std::function<double(LinkId)>& bytes_of) {
  std::map<std::string, LinkClassUsage> classes;
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const Time busy = busy_of(l);
    if (busy <= Time::zero()) continue;
    std::string a(vertex_kind_name(topology.vertex_kind(topology.link_source(l))));
    std::string b(vertex_kind_name(topology.vertex_kind(topology.link_target(l))));
    if (b < a) std::swap(a, b);
    LinkClassUsage& c = classes[a + "-" + b];
    c.name = a + "-" + b;
    c.busy += busy;
    c.bytes += Bytes(static_cast<std::int64_t>(bytes_of(l) + 0.5));
  }
  std::vector<LinkClassUsage> out;
  for (auto& [name, c] : classes) out.push_back(std::move(c));
  return out;
}

}  // namespace bubblesim
