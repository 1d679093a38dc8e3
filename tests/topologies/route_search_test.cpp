// The lazy per-source search (topologies/route_search.h) against a brute-force reference: every
// shortest route by Bellman-Ford over (1 MiB time, hops), then the documented tie-break (the link
// into each vertex from the lowest vertex id, then the lowest link id), on random graphs with
// many equal-cost routes, queried in random order so that searches are resumed and evicted.
#include "topologies/route_search.h"

#include <doctest/doctest.h>

#include <algorithm>
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

// Large enough that the reverse search bounding each route stops part way (topology.cpp relaxes
// at most 512 links), with hubs of many links like the spine switches of a fat tree: the
// goal-directed search must still give the reference's route, ties included.
TEST_CASE("goal-directed routes on large graphs with hubs equal the brute-force reference") {
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> level(1, 2);  // few distinct costs: many ties
  auto link = [&](Topology& t, VertexId a, VertexId b) {
    t.add_link(a, b, Bandwidth::bytes_per_second(1e9 * level(rng)),
               Time::from_ps(1'000'000 * level(rng)));
  };
  for (int graph = 0; graph < 3; ++graph) {
    Topology t;         // a 20 x 30 grid: routes of tens of hops
    t.set_ecmp(false);  // the reference takes the lowest id among the hubs too
    const std::int32_t rows = 20, cols = 30;
    for (std::int32_t v = 0; v < rows * cols; ++v)
      t.add_vertex("v" + std::to_string(v), VertexKind::Gpu);
    for (std::int32_t r = 0; r < rows; ++r) {
      for (std::int32_t c = 0; c < cols; ++c) {
        if (c + 1 < cols) link(t, r * cols + c, r * cols + c + 1);
        if (r + 1 < rows) link(t, r * cols + c, (r + 1) * cols + c);
      }
    }
    std::uniform_int_distribution<VertexId> pick(0, rows * cols - 1);
    for (int hub = 0; hub < 3; ++hub) {  // slow hubs of 150 links each
      const VertexId h = t.add_vertex("hub" + std::to_string(hub), VertexKind::Switch);
      for (int i = 0; i < 150; ++i)
        t.add_link(h, pick(rng), Bandwidth::bytes_per_second(1e8), Time::from_ps(40'000'000));
    }
    std::uniform_int_distribution<VertexId> any(0, t.vertex_count() - 1);
    int long_routes = 0;
    for (int q = 0; q < 60; ++q) {
      const VertexId a = any(rng), b = any(rng);
      const std::optional<Route> r = t.route(a, b);
      const std::optional<std::vector<LinkId>> expected = reference_route(t, a, b);
      REQUIRE(r.has_value() == expected.has_value());
      if (!r) continue;
      CHECK(r->links == *expected);
      long_routes += r->links.size() > 12 ? 1 : 0;
    }
    CHECK(long_routes > 10);  // past what the reverse search settles
  }
}

// The NIC affinity rule checked on random graphs against the brute-force costs: the route is a
// shortest one, and it passes both endpoints' NICs when a shortest route does, else the source's
// when one does, else the destination's when one does.
TEST_CASE("routes between GPUs with NICs follow the affinity rule on random graphs") {
  std::mt19937 rng(11);
  int both = 0, source_only = 0, destination_only = 0;
  for (int graph = 0; graph < 20; ++graph) {
    Topology t;
    const std::int32_t n = 24;
    std::uniform_int_distribution<int> kind(0, 2);
    for (std::int32_t v = 0; v < n; ++v)
      t.add_vertex("v" + std::to_string(v), kind(rng) == 0 ? VertexKind::Nic : VertexKind::Gpu);
    std::uniform_int_distribution<VertexId> pick(0, n - 1);
    for (int i = 0; i < 40; ++i) {
      const VertexId a = pick(rng), b = pick(rng);
      if (a != b) t.add_link(a, b, Bandwidth::bytes_per_second(1e9), Time::from_ps(1'000'000));
    }
    std::vector<VertexId> nics;
    for (VertexId v = 0; v < n; ++v)
      if (t.vertex_kind(v) == VertexKind::Nic) nics.push_back(v);
    if (nics.empty()) continue;
    std::uniform_int_distribution<std::size_t> pick_nic(0, nics.size() - 1);
    for (VertexId v = 0; v < n; ++v)
      if (t.vertex_kind(v) == VertexKind::Gpu) t.set_nic(v, nics[pick_nic(rng)]);
    std::vector<std::vector<PathCost>> d;
    for (VertexId v = 0; v < n; ++v) d.push_back(reference_costs(t, v));
    auto dist = [&](VertexId a, VertexId b) {
      return d[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
    };
    auto on_shortest = [&](VertexId a, VertexId w, VertexId b) {  // some shortest a->b passes w
      return dist(a, w) != kInfiniteCost && dist(w, b) != kInfiniteCost &&
             combine(dist(a, w), dist(w, b)) == dist(a, b);
    };
    for (VertexId a = 0; a < n; ++a) {
      for (VertexId b = 0; b < n; ++b) {
        const std::optional<Route> r = t.route(a, b);
        REQUIRE(r.has_value() == (dist(a, b) != kInfiniteCost));
        if (!r || a == b) continue;
        PathCost cost;
        std::vector<VertexId> passed{a};
        for (LinkId l : r->links) {
          CHECK(t.link_source(l) == passed.back());
          cost = combine(cost, link_cost(t, l));
          passed.push_back(t.link_target(l));
        }
        CHECK(passed.back() == b);
        CHECK(cost == dist(a, b));
        auto passes = [&](VertexId w) {
          return std::find(passed.begin(), passed.end(), w) != passed.end();
        };
        const std::optional<VertexId> na = t.nic_of(a), nb = t.nic_of(b);
        if (!na || !nb || *na == b || *nb == a) continue;
        const bool via_a = on_shortest(a, *na, b), via_b = on_shortest(a, *nb, b);
        if (via_a && via_b &&
            combine(combine(dist(a, *na), dist(*na, *nb)), dist(*nb, b)) == dist(a, b)) {
          CHECK((passes(*na) && passes(*nb)));
          ++both;
        } else if (via_a) {
          CHECK(passes(*na));
          ++source_only;
        } else if (via_b) {
          CHECK(passes(*nb));
          ++destination_only;
        }
      }
    }
  }
  // The random graphs exercise every branch of the rule.
  CHECK(both > 0);
  CHECK(source_only > 0);
  CHECK(destination_only > 0);
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
