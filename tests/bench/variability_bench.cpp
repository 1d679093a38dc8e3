// Monte Carlo replays (docs/variability.md): 1,000 samples of the 1.5B-model 1F1B scenario
// (scenarios/quickstart.yaml: the zero-bubble paper's Table 9 costs, 8 stages x 24 microbatches,
// a 0.601 ms delay) with cv 5% on every op and transfer, on 1 and 2 threads. Target: under 2 s
// for the 1,000 samples on 2 cores. The scenario is loaded and resolved as `run` does;
// the timed part is run_monte_carlo alone.
#include <benchmark/benchmark.h>

#include <memory>

#include "bench_support.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/variability/monte_carlo.h"

namespace {

using namespace bubblesim;

/// The quickstart scenario's 1F1B replay, loaded and resolved as `run` does. The input points at
/// the table, so the three live together, built in place.
struct QuickstartReplay {
  ResolvedScenario resolved;
  Table table;
  EngineInput input;
};
std::unique_ptr<QuickstartReplay> quickstart_1f1b() {
  Scenario scenario = load_scenario_file(
      std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/quickstart.yaml", bench::registry());
  auto r = std::make_unique<QuickstartReplay>(QuickstartReplay{resolve(scenario), {}, {}});
  ScheduleRequest request;
  request.name = "1f1b";
  r->table = generate_table(r->resolved, *bench::registry().find("1f1b"), request);
  const std::vector<StageCost> costs = r->resolved.costs.for_table(r->table.chunks);
  r->input = make_engine_input(r->resolved, r->table, costs, Replay::Simulated);
  return r;
}

void monte_carlo_quickstart(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::int64_t samples = state.range(1);
  const std::unique_ptr<QuickstartReplay> replay = quickstart_1f1b();
  const EngineInput& input = replay->input;
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv.fill(0.05);
  spec->samples = samples;
  std::uint64_t replays = 0;
  for (auto _ : state) {
    const MonteCarloResult mc = run_monte_carlo(input, spec, threads);
    if (mc.failed_samples != 0) state.SkipWithError("a sample did not finish");
    benchmark::DoNotOptimize(mc.makespan_s.mean);
    replays += mc.samples.size();
  }
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(replays), benchmark::Counter::kIsRate);
  state.counters["ops"] = static_cast<double>(replay->table.op_count());
}

// slowest_of: group at a large data-parallel size (docs/variability.md): the same scenario, per
// device, each of the 8 devices the slowest of tp 8 x dp 512 = 4096 GPUs, cv 5% on every op and
// transfer, 100 samples on one thread. D_d is the largest of 4096 normals; the transfers' factors
// take it too.
void monte_carlo_slowest_of_group(benchmark::State& state) {
  const auto gpus_per_device = static_cast<std::int32_t>(state.range(0));
  const std::unique_ptr<QuickstartReplay> replay = quickstart_1f1b();
  const EngineInput& input = replay->input;
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv.fill(0.05);
  spec->per = JitterUnit::Device;
  spec->gpus_per_device = gpus_per_device;
  spec->samples = 100;
  for (auto _ : state) {
    const MonteCarloResult mc = run_monte_carlo(input, spec, 1);
    if (mc.failed_samples != 0) state.SkipWithError("a sample did not finish");
    benchmark::DoNotOptimize(mc.makespan_s.mean);
  }
}

BENCHMARK(monte_carlo_slowest_of_group)
    ->Name("MonteCarlo/slowest_of_group")
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);

// {threads, samples}; the smoke test runs the small one.
BENCHMARK(monte_carlo_quickstart)
    ->Name("MonteCarlo/quickstart_1f1b")
    ->Args({1, 1000})
    ->Args({2, 1000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(monte_carlo_quickstart)
    ->Name("MonteCarlo/Small")
    ->Args({2, 20})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
