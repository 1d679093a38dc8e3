// MFU is a fraction a GPU can reach (sim/report/throughput.h): in (0, 1] for every shipped
// scenario with a model and for random model scenarios, at every peak override, and a lower peak
// never gives more tokens per second. Op times given beside a model that beat the peak are
// refused (sim/runner/op_time_floor.h) rather than read as an MFU above 100%.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/report/json_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;
namespace fs = std::filesystem;

namespace {

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

struct Recipe {
  bool ran = false;
  double mfu = 0, tokens_per_s = 0;
};

/// The first schedule's MFU and tokens/s per GPU (ran = false when it did not complete).
Recipe recipe_of(const Scenario& sc) {
  std::vector<std::string> first;
  if (!sc.schedules.empty()) first.push_back(sc.schedules.front().name);
  const ScenarioRun run = run_scenario(sc, builtins(), first);
  const nlohmann::json report = scenario_report_json(sc, run);
  Recipe out;
  for (const nlohmann::json& r : report["results"]) {
    const nlohmann::json& sim = r["simulation"];
    if (!sim.is_object() || !sim["mfu"].is_number()) continue;
    out.ran = true;
    out.mfu = sim["mfu"].get<double>();
    out.tokens_per_s = sim["tokens_per_s_per_gpu"].get<double>();
  }
  return out;
}

void check_fraction(const Recipe& r) {
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu <= 1.0 + 1e-12);
}

}  // namespace

TEST_CASE("MFU is in (0, 1] for every shipped scenario with a model") {
  int checked = 0;
  for (const fs::directory_entry& e :
       fs::recursive_directory_iterator(fs::path(BUBBLESIM_SOURCE_DIR) / "scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string path = e.path().string();
    if (path.find("/presets/") != std::string::npos) continue;
    Scenario sc;
    try {
      sc = load_scenario_file(path, builtins());
    } catch (const InputError&) {
      continue;  // a sweep or topology file, not a scenario
    }
    if (!sc.model || !sc.gpu) continue;
    CAPTURE(path);
    const Recipe r = recipe_of(sc);
    if (!r.ran) continue;
    check_fraction(r);
    ++checked;
  }
  CHECK(checked >= 30);
}

TEST_CASE("MFU is in (0, 1] for random model scenarios at every peak override") {
  // Random models on every GPU preset and on a GPU given by its peak and one efficiency, FP8
  // where the GPU has an FP8 peak, long sequences (the attention core dominates), each at its
  // peak and at 0.4x and 2.5x of it.
  std::mt19937_64 rng(20261201);
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + static_cast<std::ptrdiff_t>(d(rng)));
  };
  const char* gpus[] = {"a100-80g", "h100-sxm", "h200", "h800", "b200", "mi300x", ""};
  int checked = 0;
  for (int i = 0; i < 60; ++i) {
    const std::int64_t heads = pick({4, 8, 16, 32});
    const std::int64_t hidden = heads * pick({64, 128});
    const std::int64_t stages = pick({1, 2, 4});
    const std::int64_t layers = stages * pick({1, 2, 3});
    const std::string gpu = gpus[std::uniform_int_distribution<int>(0, 6)(rng)];
    const bool fp8 = gpu != "" && gpu != "a100-80g" && pick({0, 1}) == 1;
    const double efficiency = 0.1 * static_cast<double>(pick({3, 6, 9, 10}));
    // The GPU, its dense peak overridden where `tflops` is set.
    auto gpu_yaml = [&](std::optional<double> tflops) {
      const std::string flops = tflops ? fmt::format("flops: {}TFLOPS", *tflops) : "";
      if (gpu.empty())
        return fmt::format("{{{}, efficiency: {}, memory_bandwidth: 3TB/s}}",
                           tflops ? flops : "flops: 400TFLOPS", efficiency);
      return fmt::format("{{preset: {}{}}}", gpu, tflops ? ", " + flops : "");
    };
    const std::string base = fmt::format(
        "name: random\npipeline: {{stages: {}, microbatches: {}}}\n"
        "model: {{layers: {}, hidden: {}, heads: {}, kv_heads: {}, seq_len: {}, "
        "micro_batch_size: {}, vocab: {}, mlp: {}, attention: {}, fp8_linear: {}}}\n"
        "cluster: {{gpu: {}}}\nmemory: {{budget: 1000000GiB}}\nschedules: [{}]\n",
        stages, pick({1, 4, 8}), layers, hidden, heads, heads / pick({1, 2, 4}),
        pick({128, 1024, 8192, 32768}), pick({1, 2}), pick({32000, 50304}),
        pick({0, 1}) ? "swiglu" : "gelu", pick({0, 1}) ? "flash" : "standard",
        fp8 ? "true" : "false", gpu_yaml(std::nullopt),
        stages > 1 && pick({0, 1}) ? "zb-h1" : "1f1b");
    CAPTURE(base);
    const Scenario sc = load_scenario_string(base, "random.yaml", ".", builtins());
    const Recipe at_peak = recipe_of(sc);
    REQUIRE(at_peak.ran);
    check_fraction(at_peak);
    const double peak = sc.gpu->flops.flops_per_second();
    for (double factor : {0.4, 2.5}) {
      CAPTURE(factor);
      Scenario other = load_scenario_string(
          base.substr(0, base.find("cluster:")) +
              fmt::format("cluster: {{gpu: {}}}\n", gpu_yaml(peak * factor / 1e12)) +
              base.substr(base.find("memory:")),
          "random.yaml", ".", builtins());
      const Recipe r = recipe_of(other);
      REQUIRE(r.ran);
      check_fraction(r);
      // Every peak follows the override: a slower GPU never gives more tokens per second, a
      // faster one never fewer.
      if (factor < 1)
        CHECK(r.tokens_per_s <= at_peak.tokens_per_s * (1 + 1e-9));
      else
        CHECK(r.tokens_per_s >= at_peak.tokens_per_s * (1 - 1e-9));
      if (fp8) {
        CHECK(other.gpu->flops_fp8.flops_per_second() ==
              doctest::Approx(sc.gpu->flops_fp8.flops_per_second() * factor).epsilon(1e-9));
      }
    }
    ++checked;
  }
  CHECK(checked == 60);
}

TEST_CASE("op times beside a model that beat the GPU's peak are refused, naming the key") {
  // Llama-3-8B at 4096 tokens: a layer's F alone is about 1.8 TFLOP, 1.8 ms at 989 TFLOP/s.
  for (const std::string costs :
       {"costs: {per_layer: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms}}",
        "costs: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms}"}) {
    CAPTURE(costs);
    const std::string yaml =
        "name: fast\npipeline: {stages: 4, microbatches: 8}\n"
        "model: {preset: llama3-8b, seq_len: 4096, micro_batch_size: 1}\n"
        "cluster: {gpu: {preset: h100-sxm}}\n" +
        costs + "\nschedules: [1f1b]\n";
    const Scenario sc = load_scenario_string(yaml, "fast.yaml", ".", builtins());
    try {
      (void)run_scenario(sc, builtins());
      FAIL("accepted op times faster than the peak");
    } catch (const InputError& e) {
      CHECK(e.diagnostics().front().key_path.rfind("costs.", 0) == 0);
      CHECK(e.diagnostics().front().where.line == 5);
      CHECK(std::string(e.what()).find("take at the GPU's peak") != std::string::npos);
    }
    // Times the GPU can reach (the layer at about half of peak) run, with an MFU below 1.
    std::string slow = yaml;
    for (std::size_t at = slow.find("1ms"); at != std::string::npos; at = slow.find("1ms", at))
      slow.replace(at, 3, "100ms");
    const Recipe r = recipe_of(load_scenario_string(slow, "slow.yaml", ".", builtins()));
    REQUIRE(r.ran);
    check_fraction(r);
  }
}
