// `bubblesim plan` end to end (sim/plan/plan.h): Llama-3-70B on 256 H100s (32 DGX nodes), global
// batch 512 x 8192 tokens, the default search space, 32 replays, on the threads given (the
// benchmark's argument; the target is under 60 s on 2 cores). Counters: the candidates
// enumerated, the scenarios loaded for the estimate, the layouts ranked.
#include <benchmark/benchmark.h>

#include "bench_support.h"
#include "sim/plan/plan.h"

namespace bubblesim {
namespace {

void PlanLlama70b256(benchmark::State& state) {
  const PlanSpec spec =
      load_plan_file(std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/plan/llama3-70b-256.yaml");
  PlanOptions options;
  options.jobs = static_cast<int>(state.range(0));
  options.time_budget_s = 0;  // measure the whole search
  PlanResult result;
  for (auto _ : state) {
    result = run_plan(spec, bench::registry(), options);
    if (result.ranked.size() < 20) state.SkipWithError("fewer than 20 ranked layouts");
  }
  state.counters["candidates"] = static_cast<double>(result.candidates.size());
  state.counters["loads"] = static_cast<double>(result.loads);
  state.counters["ranked"] = static_cast<double>(result.ranked.size());
}

}  // namespace
}  // namespace bubblesim

BENCHMARK(bubblesim::PlanLlama70b256)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
