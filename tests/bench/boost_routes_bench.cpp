// Boost.Graph against the hand-written lazy route search (docs/architecture.md,
// "Routes and Boost.Graph"): the same route queries a 1024-stage pipeline on the 65,536-GPU fat
// tree asks for (TopologyRoutes/fat_tree_65536 in routing_bench.cpp), answered by
//   BoostRoutes/csr_dijkstra: Boost's compressed_sparse_row_graph of the topology's directed
//     links (weight: the time to move 1 MiB, as Topology::route minimises) and its
//     dijkstra_shortest_paths, stopped by a visitor once the destination is settled;
//   BoostRoutes/topology_route: Topology::route on the same topology (its own reverse A* search,
//     restarted without clearing its arrays, a cache of settled searches).
// Both include building their graph. Boost's version does no NIC affinity, ECMP or tie-breaking
// (the routes are the same length, not always the same links): it is the search alone, an upper
// bound on what the library could save.
#include <benchmark/benchmark.h>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/property_map.hpp>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "topologies/topology_builders.h"

namespace {

using namespace bubblesim;

struct Weight {
  double seconds = 0;
};
using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, Weight>;

struct Settled {};  // thrown by the visitor when the destination is settled

class StopAt : public boost::default_dijkstra_visitor {
 public:
  explicit StopAt(std::size_t target) : target_(target) {}
  void examine_vertex(std::size_t v, const Graph&) const {
    if (v == target_) throw Settled{};
  }

 private:
  std::size_t target_;
};

/// The (from, to) pairs route_pipeline of routing_bench.cpp asks for, without the host routes.
std::vector<std::pair<VertexId, VertexId>> queries(const Topology& t, std::int32_t p) {
  std::vector<VertexId> gpus = t.gpus();
  gpus.resize(static_cast<std::size_t>(p));
  std::vector<std::pair<VertexId, VertexId>> out;
  for (std::size_t d = 0; d + 1 < gpus.size(); ++d) {
    out.emplace_back(gpus[d], gpus[d + 1]);
    out.emplace_back(gpus[d + 1], gpus[d]);
  }
  return out;
}

void csr_dijkstra(benchmark::State& state) {
  const Topology t = bench::fat_tree_65536();
  const auto pairs = queries(t, static_cast<std::int32_t>(state.range(0)));
  double total = 0;
  for (auto _ : state) {
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    std::vector<Weight> weights;
    for (LinkId l = 0; l < t.link_count(); ++l) {
      edges.emplace_back(t.link_source(l), t.link_target(l));
      weights.push_back(
          {t.link_latency(l).seconds() + 1048576.0 / t.link_bandwidth(l).bytes_per_second()});
    }
    const auto n = static_cast<std::size_t>(t.vertex_count());
    const Graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), weights.begin(),
                  n);
    std::vector<double> distance(n);
    std::vector<std::size_t> predecessor(n);
    for (const auto& [from, to] : pairs) {
      try {
        boost::dijkstra_shortest_paths(
            g, static_cast<std::size_t>(from),
            boost::weight_map(boost::get(&Weight::seconds, g))
                .distance_map(boost::make_iterator_property_map(distance.begin(),
                                                                boost::get(boost::vertex_index, g)))
                .predecessor_map(boost::make_iterator_property_map(
                    predecessor.begin(), boost::get(boost::vertex_index, g)))
                .visitor(StopAt(static_cast<std::size_t>(to))));
      } catch (const Settled&) {
      }
      total += distance[static_cast<std::size_t>(to)];
    }
  }
  benchmark::DoNotOptimize(total);
  state.counters["queries"] = static_cast<double>(pairs.size());
}

void topology_route(benchmark::State& state) {
  const Topology built = bench::fat_tree_65536();
  const auto pairs = queries(built, static_cast<std::int32_t>(state.range(0)));
  std::size_t links = 0;
  for (auto _ : state) {
    const Topology t =
        bench::fat_tree_65536();  // a fresh route cache, as the Boost run builds its graph
    for (const auto& [from, to] : pairs) links += t.route(from, to)->links.size();
  }
  benchmark::DoNotOptimize(links);
  state.counters["queries"] = static_cast<double>(pairs.size());
}

}  // namespace

BENCHMARK(csr_dijkstra)->Name("BoostRoutes/csr_dijkstra")->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(topology_route)
    ->Name("BoostRoutes/topology_route")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond);
