// Sequence parallelism under a split backward (docs/memory.md): the derived M_W exceeds M_B, the
// zero-bubble schedules run, and their peak sits between the bounds of the per-op deltas.
#include <doctest/doctest.h>

#include "scenario_run_support.h"
#include "schedules/builtin_generators.h"
#include "schedules/registry.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

// Llama-3-8B's layer shape, 4 layers on 2 stages, TP 4 with SP on one 8-GPU node.
std::string yaml(const std::string& wgrad_input) {
  return R"(
name: sp-zb
pipeline: {stages: 2, microbatches: 8}
model: {preset: llama3-8b, layers: 4, seq_len: 4096}
cluster: {gpu: {preset: h100-sxm}}
topology: {builder: single-node, gpus: 8, nvlink: {bandwidth: 450GB/s, latency: 2us},
           pcie: {bandwidth: 64GB/s, latency: 2us}, gpus_per_pcie_switch: 2}
parallelism: {tp: 4, sp: true, sp_wgrad_input: )" +
         wgrad_input + R"(}
schedules: [zb-h1, 1f1b]
)";
}

}  // namespace

TEST_CASE("zb-h1 with sp: runs, and device 0's peak lies between p M_B and p M_W") {
  const std::int64_t p = 2;
  for (const char* how : {"regather", "keep"}) {
    CAPTURE(how);
    Scenario sc = load_scenario_string(yaml(how), "sp.yaml", source("scenarios"), registry());
    const ResolvedScenario r = resolve(sc);
    const StageCost& c = r.costs.stages[0];
    // Each GEMM's output gradient W keeps is whole (T rows) while SP shards what F keeps.
    REQUIRE(c.weight_grad > c.activation);
    const ScenarioRun run = run_scenario(sc, registry());
    const SimulationResult& zb = run_named(run, "zb-h1").simulation;
    REQUIRE(zb.status == RunStatus::Ok);
    // Device 0 holds stage 0 alone. Its warm-up keeps p forwards (p M_B); at most p
    // microbatches are between their F and their W, each holding at most M_W after its B.
    const Bytes peak = zb.metrics.memory.peak_activation_per_device[0];
    CHECK(peak > c.activation * p);  // B's growth shows (the old model stopped at p M_B)
    CHECK(peak <= c.weight_grad * p);
    // 1F1B has no W: its peak is the p forwards of the warm-up, as without SP's growth.
    const SimulationResult& one = run_named(run, "1f1b").simulation;
    CHECK(one.metrics.memory.peak_activation_per_device[0] == c.activation * p);
  }
}

TEST_CASE("sp_wgrad_input: keeping the gathered inputs adds (1 - 1/t) T h e per such GEMM") {
  Scenario re = load_scenario_string(yaml("regather"), "sp.yaml", source("scenarios"), registry());
  Scenario keep = load_scenario_string(yaml("keep"), "sp.yaml", source("scenarios"), registry());
  const ResolvedScenario a = resolve(re), b = resolve(keep);
  // Stage 0: 2 layers, each with two column-parallel GEMMs on the gathered normed hidden state
  // (QKV, MLP gate/up); T = 4096 tokens, h = 4096, bf16, t = 4.
  const double T = 4096, h = 4096, e = 2, t = 4;
  CHECK(b.costs.stages[0].weight_grad.as_double() - a.costs.stages[0].weight_grad.as_double() ==
        doctest::Approx(2 * 2 * T * h * e * (1 - 1 / t)));
  CHECK(b.costs.stages[0].activation == a.costs.stages[0].activation);
  const ScenarioRun ra = run_scenario(re, registry()), rb = run_scenario(keep, registry());
  CHECK(run_named(rb, "zb-h1").simulation.metrics.memory.peak_activation_per_device[0] >
        run_named(ra, "zb-h1").simulation.metrics.memory.peak_activation_per_device[0]);
}
