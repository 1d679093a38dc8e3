// Generator time over a (p, m) grid for every registered generator that accepts the input.
#include <benchmark/benchmark.h>

#include "bench_support.h"

namespace {

using namespace bubblesim;

void Generate(benchmark::State& state, const std::string& name) {
  GeneratorInput in = bench::input(static_cast<int>(state.range(0)),
                                   static_cast<int>(state.range(1)), bench::unit_cost());
  const Generator* g = bench::registry().find(name);
  try {
    (void)g->generate(in);
  } catch (const ScheduleConstraintError& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    Table t = g->generate(in);
    benchmark::DoNotOptimize(t.device_ops.data());
  }
  state.counters["tables/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

const bool registered = [] {
  for (const std::string& name : bench::registry().names()) {
    if (name == "optimized") continue;  // a search, not a rule: optimizer_bench.cpp measures it
    benchmark::RegisterBenchmark(("Generate/" + name).c_str(), Generate, name)
        ->ArgsProduct({{8, 32, 128}, {64, 512}})
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
