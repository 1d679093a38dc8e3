// The tied-embedding gradient all-reduce (model.tied_embeddings, sim/runner/tied_embedding.h):
// a hand-computed timeline, the V-shape exemption, and the fixed-delay refusal.
#include "sim/runner/tied_embedding.h"

#include <doctest/doctest.h>

#include <string>

#include "schedules/builtin_generators.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

// 2 stages, 1 microbatch, F = B = 1 ms, W = 0, no delay, no optimizer step (no HBM bandwidth).
// The embedding gradient: vocab 1000 x hidden 64 x 2 bytes = 128000 bytes; a 2-rank ring
// all-reduce at 1 GB/s of NVLink moves 128000 bytes per rank: 128 us.
std::string scenario(const std::string& tied,
                     const std::string& gpu_extra = ", nvlink_bandwidth: 1GB/s",
                     const std::string& schedule = "1f1b") {
  return "name: tied\n"
         "pipeline: {stages: 2, microbatches: 1}\n"
         "model: {layers: 4, hidden: 64, heads: 4, seq_len: 16, vocab: 1000" +
         tied +
         "}\n"
         "cluster: {gpu: {flops: 100TFLOPS" +
         gpu_extra +
         "}}\n"
         "costs: {forward: 1ms, backward_input: 1ms, backward_weight: 0ms}\n"
         "communication: {model: fixed-delay, delay: 0ms}\n"
         "iteration: {count: 2, barrier: none}\n"
         "schedules: [" +
         schedule + "]\n";
}

Metrics run(const std::string& yaml) {
  Scenario sc = load_scenario_string(yaml, "s.yaml", ".", builtins());
  ScenarioRun r = run_scenario(sc, builtins());
  REQUIRE(r.runs.size() == 1);
  return r.runs[0].simulation.metrics;
}

}  // namespace

TEST_CASE("tied embeddings: the first and the last stage all-reduce the embedding gradient") {
  // Device 0: F [0, 1], B [3, 4]; device 1: F [1, 2], B [2, 3]. The all-reduce starts when both
  // are done (4 ms) and ends 128 us later on both: every iteration lasts 4.128 ms.
  const Metrics tied = run(scenario(", tied_embeddings: true"));
  CHECK(tied.makespan == Time::from_seconds(4e-3));  // one pass over the table, as before
  CHECK(tied.iteration.iteration_time == Time::from_seconds(4.128e-3));
  const Metrics untied = run(scenario(", tied_embeddings: false"));
  CHECK(untied.iteration.iteration_time == Time::from_seconds(4e-3));
  // The resolved sync and the pair the engine runs.
  Scenario sc =
      load_scenario_string(scenario(", tied_embeddings: true"), "s.yaml", ".", builtins());
  const ResolvedScenario r = resolve(sc);
  CHECK(r.tied_embedding.bytes == doctest::Approx(128000));
  CHECK(r.tied_embedding.fixed_delay == Time::from_seconds(128e-6));
}

TEST_CASE("tied embeddings: a V-shaped placement keeps both ends on device 0, nothing to sync") {
  Scenario sc =
      load_scenario_string(scenario(", tied_embeddings: true"), "s.yaml", ".", builtins());
  const ResolvedScenario r = resolve(sc);
  Table v = Table::empty(2, 2, 1, Placement::v_shape(2));
  CHECK(tied_embedding_pairs(sc, r.tied_embedding, v).empty());
  Table straight = Table::empty(2, 1, 1, Placement::straight(2));
  const std::vector<PairSync> pairs = tied_embedding_pairs(sc, r.tied_embedding, straight);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].name == "tied-embedding all-reduce");
  CHECK(pairs[0].first == 0);
  CHECK(pairs[0].second == 1);
}

TEST_CASE("tied embeddings under fixed-delay without an NVLink bandwidth are refused") {
  Scenario sc =
      load_scenario_string(scenario(", tied_embeddings: true", ""), "s.yaml", ".", builtins());
  try {
    resolve(sc);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    const std::string text = e.diagnostics()[0].render();
    CHECK(text.rfind("s.yaml:3:", 0) == 0);
    CHECK(text.find("model.tied_embeddings") != std::string::npos);
    CHECK(text.find("nvlink_bandwidth") != std::string::npos);
  }
  // Untied, or a GPU preset with NVLink, runs.
  CHECK_NOTHROW(resolve(
      load_scenario_string(scenario(", tied_embeddings: false", ""), "s.yaml", ".", builtins())));
  CHECK_NOTHROW(resolve(load_scenario_string(
      scenario(", tied_embeddings: true", ", preset: a100-80g"), "s.yaml", ".", builtins())));
}
