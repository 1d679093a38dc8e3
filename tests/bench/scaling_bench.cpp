// Whole runs as the cluster grows (docs/performance.md, "Scaling"): a scenario loaded, resolved
// (stage costs, collectives, routes), generated and replayed, from 64 to 98,304 GPUs, with the
// time and the peak heap of one run per row. The data-parallel replicas are what grows; their
// gradient collectives are solved by class (docs/engine.md, "Symmetric flows"), so the cost past
// the topology itself should barely grow with them.
//
//   Scaling/llama3_70b/GPUS    scenarios/recipes/llama3-70b.yaml (TP 4, PP 8, interleaved with 5
//                              chunks, and 1F1B) scaled by DP: 64 microbatches per pipeline
//   Scaling/llama3_405b/GPUS   Llama-3-405B, TP 8, PP 16, 1F1B, 16 microbatches per pipeline, on
//                              a fat tree (ECMP), default 25 MiB buckets
//   Scaling/deepseek_v3        scenarios/recipes/deepseek-v3.yaml (PP 16, EP 64, DP 128,
//                              DualPipe) at 2,048 GPUs
//   Scaling/dp_4096/BUCKET/..  DP 4,096 on a 512-node fat tree with 1 GiB of gradients, every
//                              bucket size, algorithm and ring-step setting
//   Scaling/balanced/STAGES    layers_per_stage: balanced over a model with STAGES + 62 layers
//   Scaling/full_mode/GPUS     the 70B rows one flow at a time (--symmetry off), for the ratio
//
// One iteration a row (some take seconds): build/bin/bubblesim_bench
// --benchmark_filter=Scaling/ . Counters: gpus, peak_MiB, flows (what the launches stood for),
// solved (representatives), iteration_s (the result, for checking across modes).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "bench_support.h"
#include "sim/costmodel/stage_layout.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

namespace {

using namespace bubblesim;

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// `text` with the first match of `pattern` replaced (the recipes' own lines, scaled).
std::string replace(const std::string& text, const std::string& pattern, const std::string& by) {
  return std::regex_replace(text, std::regex(pattern), by, std::regex_constants::format_first_only);
}

/// The Llama-3-70B recipe (64 GPUs: TP 4, PP 8, DP 2, 8 nodes) with `dp` replicas.
std::string llama3_70b(std::int64_t dp) {
  std::string y = read_source("scenarios/recipes/llama3-70b.yaml");
  y = replace(y, "global_batch: 128", fmt::format("global_batch: {}", 64 * dp));
  y = replace(y, "nodes: 8\n", fmt::format("nodes: {}\n", 4 * dp));
  return replace(y, "dp: 2,", fmt::format("dp: {},", dp));
}

std::string llama3_405b(std::int64_t dp) {
  return fmt::format(
      "name: llama3-405b-scaling\npipeline: {{stages: 16}}\ntraining: {{global_batch: {}}}\n"
      "model: {{preset: llama3-405b, framework: megatron-core, seq_len: 8192, "
      "micro_batch_size: 1}}\ncluster: {{gpu: {{preset: h100-sxm}}}}\n"
      "topology: {{builder: fat-tree, nodes: {}, gpus_per_node: 8}}\n"
      "parallelism: {{tp: 8, dp: {}, sp: true, zero: 1, order: [tp, pp, dp]}}\n"
      "memory: {{budget: 1TiB}}\nschedules: [1f1b]\n",
      16 * dp, 16 * dp, dp);
}

std::string dp_4096(const std::string& bucket, const std::string& algorithm,
                    const std::string& steps) {
  return fmt::format(
      "name: dp-4096\npipeline: {{stages: 1, microbatches: 4}}\n"
      "costs: {{forward: 1ms, backward_input: 1ms, backward_weight: 1ms, gradient_bytes: 1GiB}}\n"
      "topology: {{builder: fat-tree, nodes: 512, gpus_per_node: 8, switch_radix: 64}}\n"
      "parallelism: {{dp: 4096, tp: 1, order: [tp, pp, dp]}}\n"
      "data_parallel: {{bucket: {}, algorithm: {}, ring_steps: {}, overlap: false}}\n"
      "schedules: [1f1b]\n",
      bucket, algorithm, steps);
}

/// One run of `yaml` per iteration, with its peak heap and what its flows cost.
void run_yaml(benchmark::State& state, const std::string& yaml, std::int64_t gpus,
              bool symmetry = true) {
  std::size_t peak = 0;
  double iteration = 0, flows = 0, solved = 0;
  for (auto _ : state) {
    const std::size_t before = bench::heap_in_use();
    bench::reset_heap_peak();
    Scenario sc =
        load_scenario_string(yaml, "scaling.yaml", BUBBLESIM_SOURCE_DIR, bench::registry());
    sc.command_line.symmetry = symmetry;
    const ScenarioRun run = run_scenario(sc, bench::registry());
    peak = std::max(peak, bench::heap_peak() - before);
    const Metrics& m = run.runs.front().simulation.metrics;
    iteration = m.iteration.iteration_time.seconds();
    flows = static_cast<double>(m.comm.symmetry.flows_started);
    solved = static_cast<double>(m.comm.symmetry.classes_started);
  }
  state.counters["gpus"] = static_cast<double>(gpus);
  state.counters["peak_MiB"] = static_cast<double>(peak) / (1 << 20);
  state.counters["iteration_s"] = iteration;
  state.counters["flows"] = flows;
  state.counters["solved"] = solved;
}

void Llama70b(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  run_yaml(state, llama3_70b(gpus / 32), gpus);
}

void Llama70bFull(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  run_yaml(state, llama3_70b(gpus / 32), gpus, false);
}

void Llama405b(benchmark::State& state) {
  const std::int64_t gpus = state.range(0);
  run_yaml(state, llama3_405b(gpus / 128), gpus);
}

void DeepSeekV3(benchmark::State& state) {
  run_yaml(state, read_source("scenarios/recipes/deepseek-v3.yaml"), 2048);
}

void Dp4096(benchmark::State& state, const std::string& bucket, const std::string& algorithm,
            const std::string& steps) {
  run_yaml(state, dp_4096(bucket, algorithm, steps), 4096);
}

void Balanced(benchmark::State& state) {
  // Uniform layers with an embedding worth one and a head worth 1.5 (Llama 3's shape), 62 layers
  // more than stages: the windows of the DP are as wide as they get.
  const auto stages = static_cast<std::int32_t>(state.range(0));
  const std::vector<double> layers(static_cast<std::size_t>(stages) + 62, 1.0);
  for (auto _ : state) benchmark::DoNotOptimize(balanced_split(layers, stages, 1.0, 1.5));
  state.counters["stages"] = stages;
}

}  // namespace

BENCHMARK(Llama70b)
    ->Arg(64)
    ->Arg(512)
    ->Arg(4096)
    ->Arg(16384)
    ->Arg(49152)
    ->Arg(98304)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->Name("Scaling/llama3_70b");
BENCHMARK(Llama70bFull)
    ->Arg(64)
    ->Arg(512)
    ->Arg(4096)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->Name("Scaling/full_mode");
BENCHMARK(Llama405b)
    ->Arg(2048)
    ->Arg(16384)
    ->Arg(98304)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->Name("Scaling/llama3_405b");
BENCHMARK(DeepSeekV3)->Iterations(1)->Unit(benchmark::kSecond)->Name("Scaling/deepseek_v3");
BENCHMARK(Balanced)->Arg(4096)->Arg(65536)->Unit(benchmark::kMillisecond)->Name("Scaling/balanced");
// Every bucket, algorithm and ring-step setting of DP 4,096 (a tree has no ring steps).
[[maybe_unused]] const bool kDp4096Registered = [] {
  struct Setting {
    const char* bucket;
    const char* algorithm;
    const char* steps;
  };
  for (const Setting& s : {Setting{"25MiB", "ring", "pipelined"},
                           {"25MiB", "ring", "stepped"},
                           {"25MiB", "tree", ""},
                           {"25MiB", "hierarchical", "pipelined"},
                           {"25MiB", "hierarchical", "stepped"},
                           {"1GiB", "ring", "stepped"},
                           {"1MiB", "ring", "pipelined"}}) {
    const std::string name = fmt::format("Scaling/dp_4096/{}/{}{}{}", s.bucket, s.algorithm,
                                         *s.steps ? "/" : "", s.steps);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [s](benchmark::State& state) {
                                   Dp4096(state, s.bucket, s.algorithm,
                                          *s.steps ? s.steps : "pipelined");
                                 })
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  }
  return true;
}();
