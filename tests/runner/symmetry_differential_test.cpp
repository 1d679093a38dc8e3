// The symmetric mode against the full one (docs/engine.md, "Symmetric flows"): random scenarios
// of 64 to 2,048 GPUs, each run with the flows solved by class (`--symmetry auto`) and one by one
// (`--symmetry off`), must give the same iteration time within 0.1%, and the same gradient sync
// and makespan. The draws cover the builders (one switch, fat trees with and without ECMP, rails),
// node sizes, tensor, pipeline, data and context parallelism, ZeRO 0 to 3, expert parallelism,
// costs given or derived from a model, bucket sizes, ring, tree and hierarchical collectives and
// NCCL's own choice with and without its tuning model, channels over every NIC or one,
// pipelined and stepped rings, bucket overlap and the SMs buckets hold, and several schedules;
// fixed-delay scenarios (no flows) too. Like engine_rules_test's differential test, a mode that
// drifts from the other fails here, with the scenario printed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "scenario_run_support.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;

namespace {

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[rng() % v.size()];
}

struct Drawn {
  std::string yaml;
  std::int64_t gpus = 0;
  bool moe = false;  // its all-to-alls are flows of one GPU each, which classes cannot merge
};

/// One random scenario with symmetric replicas. `large`: 1,024 to 2,048 GPUs, kept cheap for the
/// one-by-one run (few buckets, pipelined rings); otherwise 64 to 512.
Drawn draw(std::mt19937_64& rng, bool large) {
  const int per_node = pick<int>(rng, {2, 4, 8});
  const std::int64_t gpus =
      large ? pick<std::int64_t>(rng, {1024, 2048}) : pick<std::int64_t>(rng, {64, 128, 256, 512});
  const std::int64_t nodes = gpus / per_node;
  const int pp = pick<int>(rng, {1, 2, 4});
  const int tp = std::min(per_node, pick<int>(rng, {1, 2, 4}));
  // What the model is: costs as given, a small dense transformer, or a mixture of experts.
  const int kind = static_cast<int>(rng() % 3);
  const bool moe = kind == 2;
  const int cp = kind == 1 && rng() % 3 == 0 ? 2 : 1;
  const std::int64_t dp = gpus / (static_cast<std::int64_t>(pp) * (moe ? 1 : tp) * cp);
  const int ep = moe ? static_cast<int>(std::min<std::int64_t>(dp, pick<int>(rng, {2, 4, 8}))) : 1;
  const int microbatches = pp * pick<int>(rng, {1, 2, 4});
  std::string y =
      fmt::format("name: random\npipeline: {{stages: {}, microbatches: {}}}\n", pp, microbatches);
  if (kind == 0) {
    y += fmt::format(
        "costs: {{forward: {}ms, backward_input: {}ms, backward_weight: {}ms, "
        "gradient_bytes: {}MiB, p2p_bytes: {}MiB}}\n",
        1 + rng() % 4, 1 + rng() % 4, rng() % 3, 64 << (rng() % 4), 4 << (rng() % 3));
  } else {
    y += fmt::format(
        "model: {{layers: {}, hidden: {}, heads: 16, seq_len: 2048, vocab: 32000, "
        "micro_batch_size: 1, attention: flash{}}}\n",
        4 * pp, pick<int>(rng, {1024, 2048}),
        moe ? ", mlp: swiglu, moe: {experts: 16, top_k: 2, expert_ffn_hidden: 1024}" : "");
    // NCCL's tuning model: every launch's algorithm and timing from its first collective.
    y += rng() % 2 == 0
             ? "cluster: {gpu: {preset: h100-sxm, first_principles: {nccl_tuning: true}}}\n"
             : "cluster: {gpu: {preset: h100-sxm}}\n";
  }
  const std::string builder = pick<std::string>(rng, {"multi-node", "fat-tree", "rail"});
  y += fmt::format("topology: {{builder: {}, nodes: {}, gpus_per_node: {}", builder, nodes,
                   per_node);
  if (builder == "fat-tree") {
    y += fmt::format(", switch_radix: {}, ecmp: {}", pick<int>(rng, {8, 16, 32}),
                     rng() % 3 == 0 ? "false" : "true");
  }
  y += "}\n";
  int zero = kind == 0 ? static_cast<int>(rng() % 2) : static_cast<int>(rng() % 4);
  // ZeRO 2's default engine (DeepSpeed) refuses a pipeline, as DeepSpeed does.
  if (zero == 2 && pp > 1) zero = 1;
  std::string par = fmt::format("dp: {}, tp: {}", dp, moe ? 1 : tp);
  if (cp > 1) par += ", cp: 2";
  if (moe) par += fmt::format(", ep: {}", ep);
  if (zero > 0) par += fmt::format(", zero: {}", zero);
  y += "parallelism: {" + par + "}\n";
  // Forced tree or hierarchical under NCCL's model is refused where NCCL does not run them.
  const bool nccl = y.find("nccl_tuning") != std::string::npos;
  const std::string algorithm =
      nccl ? pick<std::string>(rng, {"auto", "ring"})
           : pick<std::string>(rng, {"auto", "ring", "tree", "hierarchical"});
  // Stepped rings over many ranks are millions of flows one by one: only where that is cheap.
  const bool stepped = !large && dp <= 64 && rng() % 3 == 0;
  const bool overlap = rng() % 2 == 0;
  const int bucket = large ? 512 : pick<int>(rng, {32, 128, 512});
  // The keys each data-parallel engine has: ZeRO 2/3 run no end-of-step buckets (their
  // collectives sit inside the ops), and Megatron (ZeRO 1) buckets only with overlap.
  std::string dp_keys =
      fmt::format("algorithm: {}, ring_steps: {}, channels: {}", algorithm,
                  stepped ? "stepped" : "pipelined", rng() % 3 == 0 ? "one" : "nics");
  const bool buckets = zero < 2;
  if (buckets) dp_keys += fmt::format(", overlap: {}", overlap ? "true" : "false");
  if (zero == 0 || (zero == 1 && overlap)) dp_keys += fmt::format(", bucket: {}MiB", bucket);
  y += "data_parallel: {" + dp_keys + "}\n";
  // The SMs the buckets hold while they hide under compute (they need overlapped buckets).
  if (!moe && buckets && overlap && rng() % 2 == 0) y += "overlap: {comm_sm_fraction: 0.1}\n";
  std::vector<std::string> schedules{"1f1b"};
  if (pp > 1 && rng() % 2 == 0) schedules.emplace_back("gpipe");
  if (pp > 1 && rng() % 3 == 0) schedules.emplace_back("zb-h1");
  y += "schedules: [" + schedules.front();
  for (std::size_t i = 1; i < schedules.size(); ++i) y += ", " + schedules[i];
  y += "]\n";
  return {y, gpus, moe};
}

ScenarioRun run(const std::string& yaml, bool symmetry) {
  Scenario sc = load_scenario_string(yaml, "random.yaml", ".", registry());
  sc.command_line.symmetry = symmetry;
  return run_scenario(sc, registry());
}

double relative(Time a, Time b) {
  const double d = std::abs(a.seconds() - b.seconds());
  return b > Time::zero() ? d / b.seconds() : d;
}

}  // namespace

TEST_CASE("the symmetric mode gives the full mode's iteration time on random scenarios") {
  std::mt19937_64 rng(44);
  double worst = 0;
  std::int64_t started = 0, solved = 0;
  int symmetric = 0;
  for (int i = 0; i < 60; ++i) {
    const Drawn d = draw(rng, i % 10 == 9);
    if (std::getenv("SYMMETRY_TEST_DUMP") != nullptr) fmt::print(stderr, "--- {}\n{}", i, d.yaml);
    ScenarioRun by_class, full;
    const auto began = std::chrono::steady_clock::now();
    try {
      by_class = run(d.yaml, true);
    } catch (const std::exception& e) {
      // A draw the loader refuses (a shape a model does not split into) is no comparison; both
      // modes refuse it alike.
      CHECK_THROWS(run(d.yaml, false));
      MESSAGE("skipped: " << std::string(e.what()));
      continue;
    }
    const auto middle = std::chrono::steady_clock::now();
    full = run(d.yaml, false);
    if (std::getenv("SYMMETRY_TEST_DUMP") != nullptr) {
      fmt::print(stderr, "time {}: {:.2f} s by class, {:.2f} s one by one\n", i,
                 std::chrono::duration<double>(middle - began).count(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - middle).count());
    }
    REQUIRE(by_class.runs.size() == full.runs.size());
    for (std::size_t r = 0; r < full.runs.size(); ++r) {
      const Metrics& a = by_class.runs[r].simulation.metrics;
      const Metrics& b = full.runs[r].simulation.metrics;
      INFO("scenario ", i, " (", d.gpus, " GPUs), ", full.runs[r].label, ":\n", d.yaml);
      CHECK(b.comm.symmetry.mode == "full");
      if (std::getenv("SYMMETRY_TEST_DUMP") != nullptr) {
        fmt::print(stderr, "{} {}: {} flows as {}, {:.3g} s\n", i, full.runs[r].label,
                   a.comm.symmetry.flows_started, a.comm.symmetry.classes_started,
                   b.iteration.iteration_time.seconds());
      }
      if (a.comm.symmetry.mode == "symmetric") {
        ++symmetric;
        if (!d.moe) {
          started += a.comm.symmetry.flows_started;
          solved += a.comm.symmetry.classes_started;
        }
      }
      const double it = relative(a.iteration.iteration_time, b.iteration.iteration_time);
      worst = std::max(worst, it);
      CHECK(it <= 1e-3);
      CHECK(relative(a.makespan, b.makespan) <= 1e-3);
      CHECK(relative(a.sync.dp_sync, b.sync.dp_sync) <= 1e-3);
      CHECK(by_class.runs[r].simulation.status == full.runs[r].simulation.status);
    }
  }
  MESSAGE("largest difference in iteration time: " << worst << "; " << started
                                                   << " flows solved as " << solved);
  CHECK(symmetric > 30);  // most draws ran by class
  // Without MoE (whose all-to-all legs are each one GPU's own flows) the classes held many flows
  // each: about 7 on these draws.
  CHECK(started > 4 * solved);
}

TEST_CASE("fixed-delay and flow-free scenarios report no symmetric solving") {
  const std::string yaml =
      "name: fixed\npipeline: {stages: 4, microbatches: 8}\n"
      "costs: {forward: 1ms, backward_input: 2ms}\n"
      "communication: {model: fixed-delay, delay: 0.1ms}\nschedules: [1f1b]\n";
  const ScenarioRun a = run(yaml, true), b = run(yaml, false);
  CHECK(a.runs[0].simulation.metrics.iteration.iteration_time ==
        b.runs[0].simulation.metrics.iteration.iteration_time);
  CHECK(a.runs[0].simulation.metrics.comm.symmetry.mode.empty());
}

TEST_CASE("collectives of many steps (trees, hierarchical rings) run every step by class") {
  // Their steps follow one another through the launcher's step timer, which shares the timer
  // queue with the gradient-sync component's own timers: a token read as the other's stalled
  // every tree after its first step, and the sync took no time.
  for (const char* algorithm : {"tree", "hierarchical"}) {
    CAPTURE(algorithm);
    const std::string yaml = fmt::format(
        "name: steps\npipeline: {{stages: 2, microbatches: 4}}\n"
        "costs: {{forward: 4ms, backward_input: 4ms, gradient_bytes: 64MiB, p2p_bytes: 16MiB}}\n"
        "topology: {{builder: multi-node, nodes: 16, gpus_per_node: 2}}\n"
        "parallelism: {{dp: 16, tp: 1}}\n"
        "data_parallel: {{algorithm: {}, overlap: false}}\nschedules: [1f1b]\n",
        algorithm);
    const Metrics a = run(yaml, true).runs[0].simulation.metrics;
    const Metrics b = run(yaml, false).runs[0].simulation.metrics;
    CHECK(a.comm.symmetry.mode == "symmetric");
    CHECK(b.sync.dp_sync > Time::zero());
    CHECK(relative(a.sync.dp_sync, b.sync.dp_sync) <= 1e-3);
    CHECK(relative(a.iteration.iteration_time, b.iteration.iteration_time) <= 1e-3);
  }
}
