// The streamed replay (sim/engine/stream_replay.h): fixed-delay replays of 1F1B and interleaved
// 1F1B read from their order streams, holding no table and no per-op timing. Counters: ops/s and
// the heap the replay itself used at its peak (bounded by the devices and the microbatches in
// flight, not by the op count). The case p = 256, m = 131072, v = 2 (2.1 x 10^8 ops),
// is Stream/interleaved/256/131072; a whole `run` of it is in docs/performance.md.
#include <benchmark/benchmark.h>

#include "bench_support.h"
#include "sim/engine/stream_replay.h"

namespace bubblesim {
namespace {

void stream_row(benchmark::State& state, const std::string& schedule, int chunks) {
  const int p = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  GeneratorInput gin = bench::input(p, m, bench::unit_cost());
  if (chunks > 1) gin.params.set("chunks", std::int64_t{chunks});
  const std::unique_ptr<OrderStream> order = bench::registry().find(schedule)->stream(gin);
  EngineInput in;
  in.stage_costs = gin.costs.for_table(order->shape().chunks);
  in.network = FixedDelayNetwork{Time::from_seconds(1e-4)};
  std::size_t peak_heap = 0;
  for (auto _ : state) {
    const std::size_t before = bench::heap_in_use();
    bench::reset_heap_peak();
    SimulationResult r = simulate_streamed(in, *order);
    peak_heap = std::max(peak_heap, bench::heap_peak() - before);
    if (r.status != RunStatus::Ok) state.SkipWithError("replay did not finish");
    benchmark::DoNotOptimize(r.metrics.makespan);
  }
  const auto ops = static_cast<double>(order->op_count());
  state.counters["ops"] = ops;
  state.counters["ops/s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
  state.counters["heap_MiB"] = static_cast<double>(peak_heap) / (1 << 20);
}

void Stream1F1B(benchmark::State& s) { stream_row(s, "1f1b", 1); }
void StreamInterleaved(benchmark::State& s) { stream_row(s, "interleaved-1f1b", 2); }

BENCHMARK(Stream1F1B)
    ->Name("Stream/1f1b")
    ->ArgsProduct({{32}, {16384}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(StreamInterleaved)
    ->Name("Stream/interleaved")
    ->Args({32, 16384})
    ->Args({256, 131072})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bubblesim
