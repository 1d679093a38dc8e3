// Routing on large topologies: building the topology and every route a p-stage
// pipeline on its first p GPUs asks for (each GPU's nearest host, the routes to and from it, the
// stage-to-stage routes both ways and the ring alpha-beta), as resolve and the engine do.
//   TopologyRoutes/fat_tree_65536/1024: the fat-tree builder, 8192 nodes x 8 GPUs, radix 64
//   TopologyRoutes/chain_100000/64:     a general-form chain of 10^5 GPUs
// and loading a topology from YAML (once over 20 s for this chain):
//   TopologyLoad/chain_yaml/100000: the scenario holding that chain in the general form (about
//                                   10 MB of YAML), loaded and resolved as `validate` does, p = 64
#include <benchmark/benchmark.h>

#include <string>

#include "bench_support.h"
#include "sim/engine/collectives.h"
#include "sim/runner/resolve.h"
#include "sim/scenario/scenario_loader.h"
#include "tests/scenario/chain_scenario.h"
#include "topologies/topology_builders.h"

namespace {

using namespace bubblesim;

Topology chain(std::int32_t vertices) {
  Topology t;
  for (std::int32_t v = 0; v < vertices; ++v) {
    t.add_vertex("v" + std::to_string(v), VertexKind::Gpu);
    if (v > 0) t.add_link(v - 1, v, Bandwidth::bytes_per_second(50e9), Time::from_ps(1'000'000));
  }
  return t;
}

std::size_t route_pipeline(const Topology& t, std::int32_t p) {
  std::vector<VertexId> gpus = t.gpus();
  gpus.resize(static_cast<std::size_t>(p));
  std::size_t links = 0;
  for (std::size_t d = 0; d < gpus.size(); ++d) {
    if (std::optional<VertexId> host = t.nearest_host(gpus[d])) {
      links += t.route(gpus[d], *host)->links.size() + t.route(*host, gpus[d])->links.size();
    }
    if (d + 1 < gpus.size()) {
      links += t.route(gpus[d], gpus[d + 1])->links.size();
      links += t.route(gpus[d + 1], gpus[d])->links.size();
    }
  }
  benchmark::DoNotOptimize(measure_alpha_beta(t, gpus));
  return links;
}

template <Topology (*Build)()>
void TopologyRoutes(benchmark::State& state) {
  std::size_t peak_heap = 0;
  for (auto _ : state) {
    const std::size_t before = bench::heap_in_use();
    bench::reset_heap_peak();
    const Topology t = Build();
    benchmark::DoNotOptimize(route_pipeline(t, static_cast<std::int32_t>(state.range(0))));
    peak_heap = std::max(peak_heap, bench::heap_peak() - before);
  }
  state.counters["peak_MiB"] = static_cast<double>(peak_heap) / (1 << 20);
}

Topology chain_100000() { return chain(100'000); }

void TopologyLoad(benchmark::State& state) {
  const std::string yaml = scenario_test::chain_scenario_yaml(state.range(0), 64, 64);
  std::size_t peak_heap = 0;
  for (auto _ : state) {
    const std::size_t before = bench::heap_in_use();
    bench::reset_heap_peak();
    const Scenario s = load_scenario_string(yaml, "chain.yaml", "", bench::registry());
    benchmark::DoNotOptimize(resolve(s).routes.bandwidth.data());
    peak_heap = std::max(peak_heap, bench::heap_peak() - before);
  }
  state.counters["yaml_MB"] = static_cast<double>(yaml.size()) / 1e6;
  state.counters["peak_MiB"] = static_cast<double>(peak_heap) / (1 << 20);
}

}  // namespace

BENCHMARK_TEMPLATE(TopologyRoutes, bench::fat_tree_65536)
    ->Name("TopologyRoutes/fat_tree_65536")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(TopologyRoutes, chain_100000)
    ->Name("TopologyRoutes/chain_100000")
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(TopologyLoad)
    ->Name("TopologyLoad/chain_yaml")
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond);
