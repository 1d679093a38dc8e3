#include "topologies/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace bubblesim {
namespace {

constexpr std::int64_t kOneMiB = std::int64_t{1} << 20;

// Route cost: the time to move 1 MiB alone, then the hop count (for ties). Compared
// lexicographically; sums saturate so absurd latencies cannot wrap around.
struct PathCost {
  std::int64_t ps = 0;
  std::int32_t hops = 0;
  friend auto operator<=>(const PathCost&, const PathCost&) = default;
};

struct PathCostCombine {
  PathCost operator()(PathCost a, PathCost b) const {
    PathCost r;
    if (__builtin_add_overflow(a.ps, b.ps, &r.ps)) r.ps = std::numeric_limits<std::int64_t>::max();
    if (__builtin_add_overflow(a.hops, b.hops, &r.hops))
      r.hops = std::numeric_limits<std::int32_t>::max();
    return r;
  }
};

constexpr PathCost kInfinite{std::numeric_limits<std::int64_t>::max(),
                             std::numeric_limits<std::int32_t>::max()};

struct VertexProps {
  std::string name;
  VertexKind kind = VertexKind::Gpu;
};

struct EdgeProps {
  LinkId id = 0;
  PathCost cost;
};

using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, EdgeProps>;

struct LinkInfo {
  VertexId source = 0;
  VertexId target = 0;
  Bandwidth bandwidth;
  Time latency;
  PathCost cost;
};

// Shortest-path tree from one source: the incoming link on the chosen path per vertex (-1 = none).
struct PathTree {
  std::vector<PathCost> dist;
  std::vector<LinkId> via;
};

// Route cache. Copies start empty (the cache is derived data); a mutex lets one Topology be
// shared read-only between threads (e.g. parallel sweep runs).
struct RouteCache {
  RouteCache() = default;
  RouteCache(const RouteCache&) {}
  RouteCache& operator=(const RouteCache&) {
    clear();
    return *this;
  }
  void clear() {
    std::lock_guard lock(mutex);
    trees.clear();
    routes.clear();
  }
  std::mutex mutex;
  std::unordered_map<VertexId, PathTree> trees;
  std::map<std::pair<VertexId, VertexId>, std::optional<Route>> routes;
};

}  // namespace

struct Topology::Impl {
  Graph graph;
  std::vector<LinkInfo> links;
  std::unordered_map<std::string, VertexId> by_name;
  mutable RouteCache cache;

  void check_vertex(VertexId v) const {
    if (v < 0 || v >= static_cast<VertexId>(boost::num_vertices(graph))) {
      throw std::out_of_range(fmt::format("vertex id {} is not in the topology ({} vertices)", v,
                                          boost::num_vertices(graph)));
    }
  }
  void check_link(LinkId l) const {
    if (l < 0 || l >= static_cast<LinkId>(links.size())) {
      throw std::out_of_range(
          fmt::format("link id {} is not in the topology ({} directed links)", l, links.size()));
    }
  }

  // Caller holds cache.mutex.
  const PathTree& tree_from(VertexId source) const {
    auto it = cache.trees.find(source);
    if (it != cache.trees.end()) return it->second;

    const std::size_t n = boost::num_vertices(graph);
    PathTree tree;
    tree.dist.assign(n, kInfinite);
    tree.via.assign(n, -1);
    std::vector<Graph::vertex_descriptor> pred(n);
    boost::dijkstra_shortest_paths(
        graph, static_cast<Graph::vertex_descriptor>(source), pred.data(), tree.dist.data(),
        boost::get(&EdgeProps::cost, graph), boost::get(boost::vertex_index, graph),
        std::less<PathCost>(), PathCostCombine(), kInfinite, PathCost{},
        boost::default_dijkstra_visitor());

    // Boost's predecessors depend on queue order; pick them again deterministically: among the
    // links that reach a vertex at its optimal cost, the one from the lowest vertex id, then the
    // lowest link id. Every such link comes from a vertex strictly closer (hops grow), so the
    // chosen links form a tree.
    for (LinkId l = 0; l < static_cast<LinkId>(links.size()); ++l) {
      const LinkInfo& info = links[l];
      const PathCost& from = tree.dist[info.source];
      if (from == kInfinite || info.target == source) continue;
      if (PathCostCombine()(from, info.cost) != tree.dist[info.target]) continue;
      LinkId& best = tree.via[info.target];
      if (best < 0 || info.source < links[best].source) best = l;  // equal source: keep lower id
    }
    return cache.trees.emplace(source, std::move(tree)).first->second;
  }
};

std::string_view vertex_kind_name(VertexKind kind) {
  switch (kind) {
    case VertexKind::Gpu:
      return "gpu";
    case VertexKind::Host:
      return "host";
    case VertexKind::PcieSwitch:
      return "pcie-switch";
    case VertexKind::Nic:
      return "nic";
    case VertexKind::Switch:
      return "switch";
  }
  return "unknown";
}

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::Topology(const Topology& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Topology& Topology::operator=(const Topology& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}

VertexId Topology::add_vertex(const std::string& name, VertexKind kind) {
  if (name.empty()) throw std::invalid_argument("a topology vertex needs a non-empty name");
  if (impl_->by_name.count(name) != 0) {
    throw std::invalid_argument(fmt::format("duplicate topology vertex name '{}'", name));
  }
  if (boost::num_vertices(impl_->graph) >=
      static_cast<std::size_t>(std::numeric_limits<VertexId>::max())) {
    throw std::invalid_argument("too many topology vertices");
  }
  auto v = static_cast<VertexId>(boost::add_vertex(VertexProps{name, kind}, impl_->graph));
  impl_->by_name.emplace(name, v);
  impl_->cache.clear();
  return v;
}

void Topology::add_link(VertexId a, VertexId b, Bandwidth bandwidth, Time latency) {
  impl_->check_vertex(a);
  impl_->check_vertex(b);
  if (a == b) {
    throw std::invalid_argument(
        fmt::format("a link from '{}' to itself is not allowed", vertex_name(a)));
  }
  const double bps = bandwidth.bytes_per_second();
  if (!(bps > 0.0) || !std::isfinite(bps)) {
    throw std::invalid_argument(
        fmt::format("link {} - {} needs a positive bandwidth", vertex_name(a), vertex_name(b)));
  }
  if (latency < Time::zero()) {
    throw std::invalid_argument(
        fmt::format("link {} - {} has a negative latency", vertex_name(a), vertex_name(b)));
  }
  if (impl_->links.size() + 2 > static_cast<std::size_t>(std::numeric_limits<LinkId>::max())) {
    throw std::invalid_argument("too many topology links");
  }
  // Integer picoseconds so that equal-cost routes compare equal exactly.
  PathCost cost{(latency + transfer_time(Bytes(kOneMiB), bandwidth)).ps(), 1};
  for (auto [s, t] : {std::pair{a, b}, std::pair{b, a}}) {
    auto id = static_cast<LinkId>(impl_->links.size());
    impl_->links.push_back(LinkInfo{s, t, bandwidth, latency, cost});
    boost::add_edge(static_cast<Graph::vertex_descriptor>(s),
                    static_cast<Graph::vertex_descriptor>(t), EdgeProps{id, cost}, impl_->graph);
  }
  impl_->cache.clear();
}

std::int32_t Topology::vertex_count() const {
  return static_cast<std::int32_t>(boost::num_vertices(impl_->graph));
}

std::optional<VertexId> Topology::find(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

const std::string& Topology::vertex_name(VertexId v) const {
  impl_->check_vertex(v);
  return impl_->graph[static_cast<Graph::vertex_descriptor>(v)].name;
}

VertexKind Topology::vertex_kind(VertexId v) const {
  impl_->check_vertex(v);
  return impl_->graph[static_cast<Graph::vertex_descriptor>(v)].kind;
}

std::vector<VertexId> Topology::gpus() const {
  std::vector<VertexId> out;
  for (VertexId v = 0; v < vertex_count(); ++v) {
    if (vertex_kind(v) == VertexKind::Gpu) out.push_back(v);
  }
  return out;
}

std::int32_t Topology::link_count() const { return static_cast<std::int32_t>(impl_->links.size()); }

Bandwidth Topology::link_bandwidth(LinkId l) const {
  impl_->check_link(l);
  return impl_->links[l].bandwidth;
}

Time Topology::link_latency(LinkId l) const {
  impl_->check_link(l);
  return impl_->links[l].latency;
}

VertexId Topology::link_source(LinkId l) const {
  impl_->check_link(l);
  return impl_->links[l].source;
}

VertexId Topology::link_target(LinkId l) const {
  impl_->check_link(l);
  return impl_->links[l].target;
}

std::string Topology::link_name(LinkId l) const {
  impl_->check_link(l);
  return fmt::format("{}->{}", vertex_name(impl_->links[l].source),
                     vertex_name(impl_->links[l].target));
}

std::vector<LinkId> Topology::links_between(VertexId from, VertexId to) const {
  impl_->check_vertex(from);
  impl_->check_vertex(to);
  std::vector<LinkId> out;
  for (LinkId l = 0; l < link_count(); ++l) {
    if (impl_->links[l].source == from && impl_->links[l].target == to) out.push_back(l);
  }
  return out;
}

std::optional<Route> Topology::route(VertexId from, VertexId to) const {
  impl_->check_vertex(from);
  impl_->check_vertex(to);
  std::lock_guard lock(impl_->cache.mutex);
  auto key = std::pair{from, to};
  if (auto it = impl_->cache.routes.find(key); it != impl_->cache.routes.end()) return it->second;

  std::optional<Route> result;
  const PathTree& tree = impl_->tree_from(from);
  if (from == to) {
    result = Route{};
  } else if (tree.via[to] >= 0) {
    Route r;
    for (VertexId v = to; v != from;) {
      LinkId l = tree.via[v];
      r.links.push_back(l);
      r.latency += impl_->links[l].latency;
      v = impl_->links[l].source;
    }
    std::reverse(r.links.begin(), r.links.end());
    result = std::move(r);
  }
  impl_->cache.routes.emplace(key, result);
  return result;
}

std::optional<VertexId> Topology::nearest_host(VertexId gpu) const {
  impl_->check_vertex(gpu);
  std::lock_guard lock(impl_->cache.mutex);
  const PathTree& tree = impl_->tree_from(gpu);
  std::optional<VertexId> best;
  for (VertexId v = 0; v < vertex_count(); ++v) {
    if (impl_->graph[static_cast<Graph::vertex_descriptor>(v)].kind != VertexKind::Host) continue;
    if (tree.dist[v] == kInfinite) continue;
    if (!best || tree.dist[v] < tree.dist[*best]) best = v;  // ties: lower id (first seen)
  }
  return best;
}

}  // namespace bubblesim
