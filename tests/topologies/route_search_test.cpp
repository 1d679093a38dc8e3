// The lazy per-source search (topologies/route_search.h) against a brute-force reference: every
// shortest route by Bellman-Ford over (1 MiB time, hops), then the documented tie-break (the link
// into each vertex from the lowest vertex id, then the lowest link id), on random graphs with
// many equal-cost routes, queried in random order so that searches are resumed and evicted.
#include "topologies/route_search.h"

#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <vector>

#include "topologies/topology.h"

namespace bubblesim {
namespace {

PathCost link_cost(const Topology& t, LinkId l) {
  return PathCost{
      (t.link_latency(l) + transfer_time(Bytes(std::int64_t{1} << 20), t.link_bandwidth(l))).ps(),
      1};
}

std::vector<PathCost> reference_costs(const Topology& t, VertexId source) {
  std::vector<PathCost> cost(static_cast<std::size_t>(t.vertex_count()), kInfiniteCost);
  cost[static_cast<std::size_t>(source)] = PathCost{};
  for (bool changed = true; changed;) {
    changed = false;
    for (LinkId l = 0; l < t.link_count(); ++l) {
      const PathCost& from = cost[static_cast<std::size_t>(t.link_source(l))];
      if (from == kInfiniteCost) continue;
      const PathCost c = combine(from, link_cost(t, l));
      PathCost& to = cost[static_cast<std::size_t>(t.link_target(l))];
      if (c < to) {
        to = c;
        changed = true;
      }
    }
  }
  return cost;
}

std::optional<std::vector<LinkId>> reference_route(const Topology& t, VertexId from, VertexId to) {
  const std::vector<PathCost> cost = reference_costs(t, from);
  if (cost[static_cast<std::size_t>(to)] == kInfiniteCost) return std::nullopt;
  std::vector<LinkId> links;
  for (VertexId v = to; v != from;) {
    LinkId best = -1;
    for (LinkId l = 0; l < t.link_count(); ++l) {
      if (t.link_target(l) != v) continue;
      const PathCost& c = cost[static_cast<std::size_t>(t.link_source(l))];
      if (c == kInfiniteCost || combine(c, link_cost(t, l)) != cost[static_cast<std::size_t>(v)])
        continue;
      if (best < 0 || t.link_source(l) < t.link_source(best)) best = l;
    }
    links.insert(links.begin(), best);
    v = t.link_source(best);
  }
  return links;
}

std::optional<VertexId> reference_host(const Topology& t, VertexId gpu) {
  const std::vector<PathCost> cost = reference_costs(t, gpu);
  std::optional<VertexId> best;
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    if (t.vertex_kind(v) != VertexKind::Host || cost[static_cast<std::size_t>(v)] == kInfiniteCost)
      continue;
    if (!best || cost[static_cast<std::size_t>(v)] < cost[static_cast<std::size_t>(*best)])
      best = v;
  }
  return best;
}

Topology random_topology(std::mt19937& rng, std::int32_t vertices, std::int32_t links) {
  Topology t;
  std::uniform_int_distribution<int> kind(0, 4);
  for (std::int32_t v = 0; v < vertices; ++v)
    t.add_vertex("v" + std::to_string(v), kind(rng) == 0 ? VertexKind::Host : VertexKind::Gpu);
  std::uniform_int_distribution<VertexId> pick(0, vertices - 1);
  std::uniform_int_distribution<int> level(1, 2);  // few distinct costs: many ties
  for (std::int32_t i = 0; i < links; ++i) {
    const VertexId a = pick(rng), b = pick(rng);
    if (a == b) continue;
    t.add_link(a, b, Bandwidth::bytes_per_second(1e9 * level(rng)),
               Time::from_ps(1'000'000 * level(rng)));
  }
  return t;
}

TEST_CASE("lazy routes and nearest hosts equal the brute-force reference") {
  std::mt19937 rng(7);
  for (int graph = 0; graph < 20; ++graph) {
    const Topology t = random_topology(rng, 30, 45);
    std::uniform_int_distribution<VertexId> pick(0, t.vertex_count() - 1);
    for (int q = 0; q < 60; ++q) {
      const VertexId a = pick(rng), b = pick(rng);
      const std::optional<Route> r = t.route(a, b);
      const std::optional<std::vector<LinkId>> expected = reference_route(t, a, b);
      REQUIRE(r.has_value() == expected.has_value());
      if (r) CHECK(r->links == *expected);
      CHECK(t.nearest_host(a) == reference_host(t, a));
    }
  }
}

TEST_CASE("a copy shares routes until one of them changes") {
  Topology t;
  const VertexId a = t.add_vertex("a", VertexKind::Gpu);
  const VertexId b = t.add_vertex("b", VertexKind::Gpu);
  const VertexId c = t.add_vertex("c", VertexKind::Switch);
  t.add_link(a, c, Bandwidth::bytes_per_second(1e9), Time::from_ps(1'000'000));
  t.add_link(c, b, Bandwidth::bytes_per_second(1e9), Time::from_ps(1'000'000));
  CHECK(t.route(a, b)->links.size() == 2);
  Topology u = t;
  u.add_link(a, b, Bandwidth::bytes_per_second(1e9), Time::from_ps(1'000'000));
  CHECK(u.route(a, b)->links.size() == 1);
  CHECK(t.route(a, b)->links.size() == 2);
}

}  // namespace
}  // namespace bubblesim
