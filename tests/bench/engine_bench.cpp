// Engine replay rate (ops and events per second) over generated tables.
#include <benchmark/benchmark.h>

#include "bench_support.h"

namespace {

using namespace bubblesim;

enum class Net { FixedDelay, Topology };

void replay(benchmark::State& state, const std::string& schedule, Net network, int chunks) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  StageCost c = bench::unit_cost();
  GeneratorInput in = bench::input(p, m, c);
  if (chunks > 1) in.params.set("chunks", std::int64_t{chunks});
  const Generator* g = bench::registry().find(schedule);
  if (g == nullptr) {
    state.SkipWithError("schedule not registered");
    return;
  }
  Table table = g->generate(in);
  std::vector<StageCost> costs = in.costs.for_table(table.chunks);
  Topology topo;
  std::vector<VertexId> vertices;
  if (network == Net::Topology) {
    // A ring of GPUs, each pair of neighbours on its own 50GB/s link.
    for (int d = 0; d < p; ++d)
      vertices.push_back(topo.add_vertex("gpu" + std::to_string(d), VertexKind::Gpu));
    for (int d = 0; d + 1 < p; ++d) {
      topo.add_link(vertices[static_cast<std::size_t>(d)],
                    vertices[static_cast<std::size_t>(d + 1)], Bandwidth::bytes_per_second(50e9),
                    Time::from_seconds(2e-6));
    }
    if (p > 2) {
      topo.add_link(vertices.back(), vertices.front(), Bandwidth::bytes_per_second(50e9),
                    Time::from_seconds(2e-6));
    }
  }
  std::uint64_t events = 0;
  for (auto _ : state) {
    EngineInput ein;
    ein.table = &table;
    ein.stage_costs = costs;
    ein.network = FixedDelayNetwork{Time::from_seconds(1e-4)};
    if (network == Net::Topology) ein.network = TopologyNetwork{&topo, vertices};
    SimulationResult r = simulate(std::move(ein));
    if (r.status != RunStatus::Ok) state.SkipWithError("replay did not finish");
    events += r.events;
    benchmark::DoNotOptimize(r.metrics.makespan);
  }
  const auto ops = static_cast<double>(table.op_count());
  state.counters["ops/s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["ops"] = ops;
}

void Replay1F1BFixedDelay(benchmark::State& s) { replay(s, "1f1b", Net::FixedDelay, 1); }
void Replay1F1BTopology(benchmark::State& s) { replay(s, "1f1b", Net::Topology, 1); }
void ReplayInterleavedTopology(benchmark::State& s) {
  replay(s, "interleaved-1f1b", Net::Topology, 2);
}
void ReplayZbvFixedDelay(benchmark::State& s) { replay(s, "zb-v", Net::FixedDelay, 1); }
void ReplaySmall(benchmark::State& s) { replay(s, "1f1b", Net::FixedDelay, 1); }

}  // namespace

BENCHMARK(ReplaySmall)->Args({4, 8})->Unit(benchmark::kMicrosecond);
BENCHMARK(Replay1F1BFixedDelay)
    ->ArgsProduct({{8, 32, 128}, {64, 1024, 4096}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(Replay1F1BTopology)
    ->ArgsProduct({{8, 32, 128}, {64, 1024}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(ReplayInterleavedTopology)
    ->Args({32, 1024})
    ->Args({128, 4096})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(ReplayZbvFixedDelay)
    ->ArgsProduct({{8, 32, 128}, {256, 1024}})
    ->Unit(benchmark::kMillisecond);
