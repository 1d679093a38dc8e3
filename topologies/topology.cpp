#include "topologies/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "topologies/route_search.h"

namespace bubblesim {
namespace {

constexpr std::int64_t kOneMiB = std::int64_t{1} << 20;
// Searches kept for reuse (a resumed search costs nothing for vertices already settled): as many
// as fit in this many bytes, at least two. Routes kept: at most this many (then the map restarts).
constexpr std::size_t kSearchCacheBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxCachedRoutes = std::size_t{1} << 20;
// Links the reverse search from a route's destination relaxes at most (it stops before the
// vertex that would pass this many) to bound the forward search (route_search.h): enough to leave
// the destination's node and settle its first switch, so that the forward search skips the rest
// of the network; more costs more per route than it saves (a spine switch of a large fat tree
// has thousands of links in).
constexpr std::int64_t kReverseRelaxations = 512;

// A link's routing cost: the time to move 1 MiB over it alone, in integer picoseconds so that
// equal-cost routes compare equal exactly.
PathCost link_cost(Time latency, Bandwidth bandwidth) {
  return PathCost{(latency + transfer_time(Bytes(kOneMiB), bandwidth)).ps(), 1};
}

struct LinkInfo {
  VertexId source = 0;
  VertexId target = 0;
  Bandwidth bandwidth;
  Time latency;
  PathCost cost;
};

// Derived routing data of one unchanging set of links. Copies of a Topology share it (a mutation
// gives the mutated topology a fresh one); a mutex lets threads share it (parallel sweep runs).
struct RouteCache {
  std::mutex mutex;
  std::unique_ptr<LinkGraph> graph;
  std::size_t max_searches = 2;
  std::vector<std::unique_ptr<SourceSearch>> searches;  // least recently used first
  // The goal-directed search of compute_route and the reverse search that bounds it.
  std::unique_ptr<SourceSearch> toward, reverse;
  std::unordered_map<std::uint64_t, std::optional<Route>> routes;
  std::unordered_map<VertexId, std::optional<VertexId>> hosts;
};

std::uint64_t pair_key(VertexId from, VertexId to) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
         static_cast<std::uint32_t>(to);
}

}  // namespace

struct Topology::Impl {
  std::vector<std::string> names;
  std::vector<VertexKind> kinds;
  std::vector<LinkInfo> links;
  std::vector<VertexId> nics;  // per vertex: the GPU's own NIC (set_nic), -1 when none
  std::unordered_map<std::string, VertexId> by_name;
  std::int32_t host_count = 0;
  bool ecmp = true;
  mutable std::shared_ptr<RouteCache> cache = std::make_shared<RouteCache>();

  void check_vertex(VertexId v) const {
    if (v < 0 || v >= static_cast<VertexId>(names.size())) {
      throw std::out_of_range(
          fmt::format("vertex id {} is not in the topology ({} vertices)", v, names.size()));
    }
  }
  void check_link(LinkId l) const {
    if (l < 0 || l >= static_cast<LinkId>(links.size())) {
      throw std::out_of_range(
          fmt::format("link id {} is not in the topology ({} directed links)", l, links.size()));
    }
  }
  // A fresh cache unless this one is unused and not shared with a copy (building a topology
  // changes it once per vertex and link).
  void changed() {
    if (cache.use_count() == 1 && !cache->graph && cache->routes.empty() && cache->hosts.empty())
      return;
    cache = std::make_shared<RouteCache>();
  }

  // The search from `source`, resumed when cached. Caller holds cache->mutex.
  SourceSearch& search_from(VertexId source) const {
    RouteCache& c = *cache;
    if (!c.graph) build_graph(c);
    for (std::size_t i = c.searches.size(); i-- > 0;) {
      if (c.searches[i]->source() != source) continue;
      std::rotate(c.searches.begin() + static_cast<std::ptrdiff_t>(i),
                  c.searches.begin() + static_cast<std::ptrdiff_t>(i) + 1, c.searches.end());
      return *c.searches.back();
    }
    const VertexId through = nics[static_cast<std::size_t>(source)];
    if (c.searches.size() >= c.max_searches) {  // the least recently used one starts over
      std::rotate(c.searches.begin(), c.searches.begin() + 1, c.searches.end());
      c.searches.back()->restart(source, through);
    } else {
      c.searches.push_back(std::make_unique<SourceSearch>(*c.graph, source, through));
    }
    return *c.searches.back();
  }

  // The search from `from` toward `to`, goal-directed (route_search.h): every vertex on a
  // shortest route settled with its exact cost. Caller holds cache->mutex.
  SourceSearch& search_toward(VertexId from, VertexId to) const {
    RouteCache& c = *cache;
    if (!c.graph) build_graph(c);
    if (!c.reverse) {
      c.reverse =
          std::make_unique<SourceSearch>(*c.graph, to, -1, SourceSearch::Direction::Reverse);
      c.toward = std::make_unique<SourceSearch>(*c.graph, from);
    }
    c.reverse->restart(to);
    while (c.reverse->step_within(kReverseRelaxations)) {
    }
    c.toward->restart(from, nics[static_cast<std::size_t>(from)], c.reverse.get());
    c.toward->settle_goal();
    return *c.toward;
  }

  void build_graph(RouteCache& c) const {
    std::vector<SearchLink> search_links;
    search_links.reserve(links.size());
    for (const LinkInfo& l : links) search_links.push_back(SearchLink{l.source, l.target, l.cost});
    c.graph = std::make_unique<LinkGraph>(static_cast<std::int32_t>(names.size()),
                                          std::move(search_links));
    if (ecmp) {  // network switches spread equal-cost routes (docs/topologies.md)
      c.graph->spreads.assign(names.size(), 0);
      for (std::size_t v = 0; v < names.size(); ++v)
        c.graph->spreads[v] = kinds[v] == VertexKind::Switch ? 1 : 0;
    }
    // A search holds a cost and a heap key (16 bytes each), two flags and four int32 arrays per
    // vertex.
    const std::size_t per_search = names.size() * (2 * sizeof(PathCost) + 2 + 4 * 4) + 1;
    c.max_searches = std::max<std::size_t>(2, kSearchCacheBytes / per_search);
  }

  // Appends the route from `search`'s source to settled `to` to `r`; with `through`, one that
  // passes the search's `through` vertex (the caller knows a shortest one does).
  // `flow`: the route's destination, for ECMP (SourceSearch::via).
  void append_route(const SourceSearch& search, VertexId to, Route& r, bool through,
                    VertexId flow) const {
    const std::size_t first = r.links.size();
    for (VertexId v = to; v != search.source();) {
      const LinkId l = through ? search.via_through(v, flow) : search.via(v, flow);
      if (v == search.through_vertex()) through = false;
      r.links.push_back(l);
      r.latency += links[static_cast<std::size_t>(l)].latency;
      v = links[static_cast<std::size_t>(l)].source;
    }
    std::reverse(r.links.begin() + static_cast<std::ptrdiff_t>(first), r.links.end());
  }

  // The NIC affinity rule: among the shortest routes, one through both endpoints' own NICs, else
  // through the source's, else through the destination's; then the search's lowest vertex ids.
  // The search from `from` knows which routes pass its own NIC; the leg from the destination's
  // NIC in is the reverse of the route out to it from the destination (add_link puts the two
  // directions of a link next to each other, with the same cost: the reverse of l is l ^ 1).
  std::optional<Route> compute_route(VertexId from, VertexId to) const {
    if (from == to) return Route{};
    SourceSearch* search = &search_toward(from, to);
    if (!search->settled(to)) return std::nullopt;
    const PathCost best = search->cost(to);
    const bool out = search->through(to);
    const VertexId in = nics[static_cast<std::size_t>(to)];
    // The destination's NIC can be on a shortest route only if it is strictly closer than `to`
    // (every link adds a hop); an unsettled vertex is at least as far.
    if (in >= 0 && in != from && search->settled(in) && search->cost(in) < best) {
      const PathCost to_in = search->cost(in);
      SourceSearch& back = search_from(to);  // a plain search: `toward` stays as it is
      back.settle(in);
      std::optional<Route> leg;  // from the destination out to its NIC, when on a shortest route
      if (back.settled(in) && combine(to_in, back.cost(in)) == best) {
        leg.emplace();
        append_route(back, in, *leg, false, in);
      }
      if (leg && (search->through(in) || !out)) {
        Route r;
        append_route(*search, in, r, search->through(in), to);
        for (auto l = leg->links.rbegin(); l != leg->links.rend(); ++l) r.links.push_back(*l ^ 1);
        r.latency += leg->latency;
        return r;
      }
    }
    Route r;
    append_route(*search, to, r, out, to);
    return r;
  }

  // The closest host: the first settled in cost order, then the lowest id among equal costs.
  std::optional<VertexId> compute_nearest_host(VertexId gpu) const {
    if (host_count == 0) return std::nullopt;
    SourceSearch& search = search_from(gpu);
    auto is_host = [&](VertexId v) {
      return kinds[static_cast<std::size_t>(v)] == VertexKind::Host;
    };
    const std::vector<VertexId>& order = search.order();
    std::size_t first = 0;
    while (first < order.size() && !is_host(order[first])) ++first;
    while (first == order.size() && search.step()) {
      if (!is_host(order.back())) ++first;
    }
    if (first == order.size()) return std::nullopt;
    const PathCost best_cost = search.cost(order[first]);
    search.settle_through(best_cost);
    VertexId best = order[first];
    for (VertexId v : order) {
      if (is_host(v) && search.cost(v) == best_cost) best = std::min(best, v);
    }
    return best;
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

const std::vector<std::string>& vertex_kind_names() {
  static const std::vector<std::string> names{"gpu", "host", "pcie-switch", "nic", "switch"};
  return names;
}

std::optional<VertexKind> vertex_kind_from_name(std::string_view name) {
  for (VertexKind kind : {VertexKind::Gpu, VertexKind::Host, VertexKind::PcieSwitch,
                          VertexKind::Nic, VertexKind::Switch})
    if (vertex_kind_name(kind) == name) return kind;
  return std::nullopt;
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
  if (impl_->names.size() >= static_cast<std::size_t>(std::numeric_limits<VertexId>::max())) {
    throw std::invalid_argument("too many topology vertices");
  }
  const auto v = static_cast<VertexId>(impl_->names.size());
  impl_->names.push_back(name);
  impl_->kinds.push_back(kind);
  impl_->nics.push_back(-1);
  if (kind == VertexKind::Host) ++impl_->host_count;
  impl_->by_name.emplace(name, v);
  impl_->changed();
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
  const PathCost cost = link_cost(latency, bandwidth);
  for (auto [s, t] : {std::pair{a, b}, std::pair{b, a}}) {
    impl_->links.push_back(LinkInfo{s, t, bandwidth, latency, cost});
  }
  impl_->changed();
}

void Topology::scale_bandwidth(VertexKind kind, double factor) {
  if (!(factor > 0.0 && factor <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("a link bandwidth scale must be above 0 and at most 1, not {}", factor));
  }
  for (LinkInfo& l : impl_->links) {
    if (impl_->kinds[static_cast<std::size_t>(l.source)] != kind &&
        impl_->kinds[static_cast<std::size_t>(l.target)] != kind)
      continue;
    l.bandwidth = Bandwidth::bytes_per_second(l.bandwidth.bytes_per_second() * factor);
    l.cost = link_cost(l.latency, l.bandwidth);
  }
  impl_->changed();
}

void Topology::set_ecmp(bool on) {
  if (impl_->ecmp == on) return;
  impl_->ecmp = on;
  impl_->changed();
}

bool Topology::ecmp() const { return impl_->ecmp; }

void Topology::set_nic(VertexId gpu, VertexId nic) {
  impl_->check_vertex(gpu);
  impl_->check_vertex(nic);
  if (vertex_kind(gpu) != VertexKind::Gpu || vertex_kind(nic) != VertexKind::Nic) {
    throw std::invalid_argument(
        fmt::format("'{}' ({}) cannot have '{}' ({}) as its NIC: a gpu "
                    "vertex needs a nic vertex",
                    vertex_name(gpu), vertex_kind_name(vertex_kind(gpu)), vertex_name(nic),
                    vertex_kind_name(vertex_kind(nic))));
  }
  impl_->nics[static_cast<std::size_t>(gpu)] = nic;
  impl_->changed();
}

std::optional<VertexId> Topology::nic_of(VertexId gpu) const {
  impl_->check_vertex(gpu);
  const VertexId nic = impl_->nics[static_cast<std::size_t>(gpu)];
  if (nic < 0) return std::nullopt;
  return nic;
}

std::int32_t Topology::vertex_count() const {
  return static_cast<std::int32_t>(impl_->names.size());
}

std::optional<VertexId> Topology::find(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

const std::string& Topology::vertex_name(VertexId v) const {
  impl_->check_vertex(v);
  return impl_->names[static_cast<std::size_t>(v)];
}

VertexKind Topology::vertex_kind(VertexId v) const {
  impl_->check_vertex(v);
  return impl_->kinds[static_cast<std::size_t>(v)];
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
  const std::shared_ptr<RouteCache> cache = impl_->cache;
  std::lock_guard lock(cache->mutex);
  const std::uint64_t key = pair_key(from, to);
  if (auto it = cache->routes.find(key); it != cache->routes.end()) return it->second;
  std::optional<Route> result = impl_->compute_route(from, to);
  if (cache->routes.size() >= kMaxCachedRoutes) cache->routes.clear();
  cache->routes.emplace(key, result);
  return result;
}

std::optional<VertexId> Topology::nearest_host(VertexId gpu) const {
  impl_->check_vertex(gpu);
  const std::shared_ptr<RouteCache> cache = impl_->cache;
  std::lock_guard lock(cache->mutex);
  if (auto it = cache->hosts.find(gpu); it != cache->hosts.end()) return it->second;
  const std::optional<VertexId> host = impl_->compute_nearest_host(gpu);
  cache->hosts.emplace(gpu, host);
  return host;
}

}  // namespace bubblesim
