#include "sim/engine/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>

#include "sim/engine/collective_layout.h"
#include "sim/engine/max_min_flows.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {

using RouteCache = std::map<std::pair<VertexId, VertexId>, Route>;

const Route& cached_route(const Topology& topology, RouteCache& cache, VertexId a, VertexId b) {
  auto it = cache.find({a, b});
  if (it != cache.end()) return it->second;
  std::optional<Route> r = topology.route(a, b);
  if (!r) {
    throw std::invalid_argument("no route between " + topology.vertex_name(a) + " and " +
                                topology.vertex_name(b) + " for a collective");
  }
  return cache.emplace(std::make_pair(a, b), std::move(*r)).first->second;
}

std::vector<CollectiveStep> collective_steps(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                             double bytes,
                                             const std::vector<std::int32_t>& node_of_rank,
                                             RingSteps ring) {
  RankPlaces places;
  places.node = node_of_rank;
  places.ranks.assign(node_of_rank.size(), -1);
  places.nic.assign(node_of_rank.size(), -1);
  places.nvswitch.assign(node_of_rank.size(), -1);
  places.uplink.assign(node_of_rank.size(), -1);
  places.sharp.assign(node_of_rank.size(), -1);
  const NodeGroups groups = node_groups(places, CollectiveChannels::One);
  return lay_out(kind, algorithm, bytes, places, groups, ring, true).steps;
}

Time collective_closed_form(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                            std::int32_t ranks, std::int32_t nodes, const AlphaBeta& link,
                            std::int32_t channels) {
  if (ranks <= 1) return Time::zero();
  const double n = ranks;
  auto ring = [&](double steps, double chunk, Bandwidth b, Time a) {
    return steps * (chunk / b.bytes_per_second() + a.seconds());
  };
  // A flat collective runs at the slowest link it crosses; between nodes its C channels share
  // the bytes over C NICs.
  const bool multi = nodes > 1;
  const double c = std::max(channels, 1);
  const Bandwidth flat_b =
      multi ? Bandwidth::bytes_per_second(
                  std::min(link.intra.bytes_per_second(), c * link.inter.bytes_per_second()))
            : link.intra;
  const Time flat_a = multi ? std::max(link.alpha_intra, link.alpha_inter) : link.alpha_intra;
  const bool all_reduce = kind == CollectiveKind::AllReduce;
  const std::int32_t local = std::max(ranks / std::max(nodes, 1), 1);
  double s = 0.0;
  if (algorithm == CollectiveAlgorithm::Tree && all_reduce) {
    s = 2.0 * bytes / flat_b.bytes_per_second() +
        2.0 * (local - 1 + ceil_log2(nodes)) * flat_a.seconds();
  } else if (algorithm == CollectiveAlgorithm::Nvls && !multi && ranks > 1) {
    const double through = all_reduce ? bytes * (n + 1) / n : bytes;
    s = through / link.intra.bytes_per_second() + 2.0 * link.alpha_intra.seconds();
  } else if (algorithm == CollectiveAlgorithm::Hierarchical && all_reduce && multi &&
             ranks % nodes == 0 && local > 1) {
    const double l = local;
    const double nn = nodes;
    s = 2.0 * ring(l - 1, bytes / l, link.intra, link.alpha_intra) +
        ring(2.0 * (nn - 1), bytes / l / nn, link.inter, link.alpha_inter);
  } else {
    s = ring(all_reduce ? 2.0 * (n - 1) : n - 1, bytes / n, flat_b, flat_a);
  }
  return Time::from_seconds(s);
}

std::vector<std::int32_t> node_of_gpus(const Topology& topology,
                                       const std::vector<VertexId>& gpus) {
  std::vector<std::int32_t> out;
  for (VertexId g : gpus) {
    std::optional<VertexId> host = topology.nearest_host(g);
    out.push_back(host ? static_cast<std::int32_t>(*host) : -1 - static_cast<std::int32_t>(g));
  }
  return out;
}

AlphaBeta measure_alpha_beta(const Topology& topology, const std::vector<VertexId>& gpus) {
  std::vector<std::int32_t> node = node_of_gpus(topology, gpus);
  AlphaBeta ab;
  bool have_intra = false, have_inter = false;
  const std::size_t n = gpus.size();
  // Consecutive ranks are what a ring uses: the worst ring neighbour when the ranks are in
  // topology order, and a safe bound otherwise (n routes, not n^2).
  for (std::size_t i = 0; i < n && n > 1; ++i) {
    const std::size_t j = (i + 1) % n;
    std::optional<Route> r = topology.route(gpus[i], gpus[j]);
    if (!r || r->links.empty()) continue;
    double bw = topology.link_bandwidth(r->links.front()).bytes_per_second();
    for (LinkId l : r->links) bw = std::min(bw, topology.link_bandwidth(l).bytes_per_second());
    const bool same = node[i] == node[j];
    Bandwidth& b = same ? ab.intra : ab.inter;
    Time& a = same ? ab.alpha_intra : ab.alpha_inter;
    bool& have = same ? have_intra : have_inter;
    if (!have || bw < b.bytes_per_second()) b = Bandwidth::bytes_per_second(bw);
    if (!have || r->latency > a) a = r->latency;
    have = true;
  }
  if (!have_intra) {
    ab.intra = ab.inter;
    ab.alpha_intra = ab.alpha_inter;
  }
  if (!have_inter) {
    ab.inter = ab.intra;
    ab.alpha_inter = ab.alpha_intra;
  }
  return ab;
}

CollectiveInstance::CollectiveInstance(const Topology& topology, std::vector<VertexId> ranks,
                                       std::vector<CollectiveStep> steps,
                                       std::optional<ModelTiming> timing)
    : topology_(&topology), ranks_(std::move(ranks)), steps_(std::move(steps)), timing_(timing) {}

bool CollectiveInstance::start(FlowPort& port, std::uint32_t token, Time now, RouteCache& routes) {
  start_ = now;
  if (steps_.empty()) {
    done_ = true;
    end_ = now;
    return true;
  }
  start_step(port, token, now, routes);
  return false;
}

void CollectiveInstance::start_step(FlowPort& port, std::uint32_t token, Time now,
                                    RouteCache& routes) {
  const CollectiveStep& step = steps_[step_];
  outstanding_ = static_cast<std::int32_t>(step.size());
  step_start_ = now;
  step_links_.clear();
  if (timing_ && step_ == 0) {  // NCCL's bandwidth: no sooner than its floor
    ++outstanding_;
    port.add_timer(now + timing_->floor, token);
  }
  for (const CollectiveTransfer& t : step) {
    const Route& r = cached_route(*topology_, routes, ranks_[static_cast<std::size_t>(t.from)],
                                  ranks_[static_cast<std::size_t>(t.to)]);
    const Time latency = r.latency * t.latencies;
    if (t.bytes > 0.0 && !r.links.empty()) {
      port.add_flow(r.links, t.bytes, latency, token, now);
      step_links_.insert(step_links_.end(), r.links.begin(), r.links.end());
    } else {
      port.add_timer(now + latency, token);
    }
  }
}

bool CollectiveInstance::on_arrival(FlowPort& port, std::uint32_t token, Time now,
                                    RouteCache& routes) {
  if (done_ || --outstanding_ > 0) return false;
  if (in_latency_) {
    done_ = true;
    end_ = now;
    return true;
  }
  std::sort(step_links_.begin(), step_links_.end());
  step_links_.erase(std::unique(step_links_.begin(), step_links_.end()), step_links_.end());
  for (LinkId l : step_links_) slices_.push_back(CollectiveLinkSlice{l, step_start_, now});
  if (++step_ < steps_.size()) {
    start_step(port, token, now, routes);
    return false;
  }
  if (timing_ && timing_->latency > Time::zero()) {  // NCCL's latency after the last byte
    in_latency_ = true;
    outstanding_ = 1;
    port.add_timer(now + timing_->latency, token);
    return false;
  }
  done_ = true;
  end_ = now;
  return true;
}

namespace {

// A standalone driver: its own network and timer queue.
class StandalonePort : public FlowPort {
 public:
  explicit StandalonePort(const Topology& topology)
      : network_(MaxMinFlows::for_topology(topology)) {}
  void add_flow(const std::vector<LinkId>& links, double bytes, Time latency, std::uint32_t token,
                Time now, double weight) override {
    MaxMinFlows::FlowId id = network_.add(links, bytes, now, weight);
    pending_[id] = {latency, token};
  }
  void add_timer(Time at, std::uint32_t token) override { timers_.push({at, seq_++, token}); }

  // Next event: a timer or a flow completion (turned into a timer at finish + latency).
  bool step(std::uint32_t& token, Time& now) {
    while (true) {
      std::optional<Time> flow = network_.next_completion();
      if (flow && (timers_.empty() || *flow <= timers_.top().at)) {
        for (MaxMinFlows::FlowId f : network_.complete_finished(*flow)) {
          auto [latency, t] = pending_.at(f);
          pending_.erase(f);
          add_timer(*flow + latency, t);
        }
        continue;
      }
      if (timers_.empty()) return false;
      Timer t = timers_.top();
      timers_.pop();
      token = t.token;
      now = t.at;
      return true;
    }
  }

 private:
  struct Timer {
    Time at;
    std::uint64_t seq;
    std::uint32_t token;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  MaxMinFlows network_;
  std::map<MaxMinFlows::FlowId, std::pair<Time, std::uint32_t>> pending_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t seq_ = 0;
};

}  // namespace

void run_alone(CollectiveInstance& c, const Topology& topology) {
  StandalonePort port(topology);
  RouteCache routes;
  if (c.start(port, 0, Time::zero(), routes)) return;
  std::uint32_t token = 0;
  Time now;
  while (port.step(token, now)) {
    if (c.on_arrival(port, token, now, routes)) break;
  }
}

CollectiveTiming simulate_collective(const Topology& topology, const std::vector<VertexId>& gpus,
                                     CollectiveKind kind, CollectiveAlgorithm algorithm,
                                     double bytes, RingSteps ring) {
  std::vector<std::int32_t> node = node_of_gpus(topology, gpus);
  CollectiveInstance c(topology, gpus, collective_steps(kind, algorithm, bytes, node, ring));
  run_alone(c, topology);
  CollectiveTiming out;
  out.simulated = c.end_time() - c.start_time();
  std::vector<std::int32_t> distinct = node;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  out.closed_form = collective_closed_form(
      kind, algorithm, bytes, static_cast<std::int32_t>(gpus.size()),
      static_cast<std::int32_t>(distinct.size()), measure_alpha_beta(topology, gpus));
  out.link_slices = c.link_slices();
  return out;
}

Time simulate_all_to_all(const Topology& topology, const std::vector<VertexId>& gpus, double bytes,
                         double cross_node_factor) {
  const auto n = static_cast<std::int32_t>(gpus.size());
  if (n <= 1 || bytes <= 0) return Time::zero();
  const std::int64_t flows = std::int64_t{n} * (n - 1);
  if (flows > kMaxCollectiveFlows) {
    throw InputError(fmt::format(
        "an all-to-all over {} ranks is {} flows, more than the limit of {} (kMaxCollectiveFlows "
        "in "
        "sim/engine/collectives.h: raise it there and rebuild, or use a smaller parallelism.ep)",
        n, flows, kMaxCollectiveFlows));
  }
  const std::vector<std::int32_t> node = node_of_gpus(topology, gpus);
  CollectiveStep step;
  const double share = bytes / n;
  for (std::int32_t i = 0; i < n; ++i) {
    for (std::int32_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const bool remote = node[static_cast<std::size_t>(i)] != node[static_cast<std::size_t>(j)];
      step.push_back({i, j, remote ? share * cross_node_factor : share});
    }
  }
  CollectiveInstance c(topology, gpus, {step});
  run_alone(c, topology);
  return c.end_time() - c.start_time();
}

}  // namespace bubblesim
