// Activation checkpointing as frameworks run it (docs/memory.md): per checkpointed unit inside the
// backward, the peak is the checkpoints plus one unit. Llama-3-70B with FSDP over 256 H100s
// (scenarios/memory/llama3-70b-fsdp-recompute.yaml), the arithmetic written out.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "scenario_run_support.h"
#include "sim/report/chrome_trace_writer.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

// Llama-3-70B (scenarios/presets/models.yaml): L layers, hidden h, 64 heads of 128, 8 KV heads,
// SwiGLU width f, vocabulary V; one sequence of s tokens per GPU (b = 1), bf16 (e = 2 bytes).
constexpr std::int64_t L = 80, h = 8192, a = 64, kv_width = 8 * 128, f = 28672, V = 128256;
constexpr std::int64_t s = 8192, b = 1, e = 2, D = 256;
constexpr std::int64_t T = s * b, H = T * h * e;  // one hidden-state tensor: 128 MiB

// Parameters: per layer Wq and Wo (h x h each), Wk and Wv (h x 1024 each), the three SwiGLU
// matrices (h x f each), two RMSNorms (h each); the embedding and the untied LM head (V x h each)
// and the final norm.
constexpr std::int64_t kParameters =
    L * (2 * h * h + 2 * h * kv_width + 3 * h * f + 2 * h) + 2 * V * h + h;
// ZeRO-3 shards the bf16 weights (2 bytes), fp32 gradients (4) and Adam's fp32 master copy and two
// moments (12) over the D = 256 data-parallel GPUs: 18 / 256 bytes per parameter, as the cost model
// counts the static memory today (docs/models.md, "Static memory and ZeRO"). Not counted yet:
// the unsharded parameters FSDP gathers for the block that runs and the one it prefetches (two
// blocks of 1.7 GB in bf16), which the data-parallel model is to add.
constexpr std::int64_t kStatic = kParameters * 18 / D;
// One block's activations kept for its backward (Korthikanti et al. 2022, with GQA, SwiGLU, no
// dropout, FlashAttention): the two norm inputs and the QKV and MLP-up inputs (4 H), Q and the
// attention output (2 T h e), K and V (2 T 1024 e), the fp32 log-sum-exp (4 a s b), the gate,
// up and product of the SwiGLU (3 T f e).
constexpr std::int64_t kLayer =
    4 * H + 2 * T * h * e + 2 * T * kv_width * e + 4 * a * s * b + 3 * T * f * e;
// The checkpoints: every block's input, L of them.
constexpr std::int64_t kCheckpoints = L * H;
// The LM head keeps the final norm's input, its own input and the fp32 softmax of the loss.
constexpr std::int64_t kHead = 2 * H + 4 * T * V;
// One block rebuilt while the backward runs through it: its activations but its input, which is
// the checkpoint already held.
constexpr std::int64_t kUnit = kLayer - H;

/// The scenario file; `whole_stage`: with `granularity: stage` instead.
Scenario scenario(bool whole_stage) {
  Scenario sc =
      load_scenario_file(source("scenarios/memory/llama3-70b-fsdp-recompute.yaml"), registry());
  if (whole_stage) sc.memory.recompute.granularity = RecomputeGranularity::Stage;
  return sc;
}

}  // namespace

TEST_CASE("Llama-3-70B, FSDP over 256 H100s, full recompute per layer: checkpoints + one layer") {
  static_assert(kParameters == 70'553'706'496);  // the preset's 70.55B (model card: 70.6B)
  const Scenario sc = scenario(false);
  const ResolvedScenario r = resolve(sc);
  const StageCost& c = r.costs.stages[0];
  CHECK(c.static_memory == Bytes(kStatic));  // 4.62 GiB
  CHECK(c.activation == Bytes(kCheckpoints + kHead));
  CHECK(c.backward_recompute.units == L);
  CHECK(c.backward_recompute.unit == Bytes(kUnit));
  CHECK(c.backward_recompute.not_stored == Bytes(L * kLayer - kCheckpoints));
  // B redoes the 80 blocks' forward: its duration is T_B + T_R.
  CHECK(c.backward_recompute.time > c.forward / 2);

  const ScenarioRun run = run_scenario(sc, registry());
  const ScheduleRun& one = run_named(run, "1f1b");
  REQUIRE(one.simulation.status == RunStatus::Ok);
  // One microbatch per GPU (256 sequences over 256 GPUs): the peak is at the start of its
  // backward, 4.62 + 10 + 4.16 + 1.97 = 20.75 GiB, within the H100's 80 GB (74.5 GiB).
  const Bytes peak = one.simulation.metrics.memory.peak_memory_per_device[0];
  CHECK(peak == Bytes(kStatic + kCheckpoints + kHead + kUnit));
  CHECK(kStatic + kCheckpoints + kHead + kUnit == 22'285'380'160);
  CHECK(peak < Bytes(80'000'000'000));
}

TEST_CASE("the same step with one R op rebuilding the whole stage needs 190.6 GiB") {
  const Scenario sc = scenario(true);
  const ScenarioRun run = run_scenario(sc, registry());
  const ScheduleRun& one = run_named(run, "1f1b");
  CHECK(one.simulation.status == RunStatus::OutOfMemory);
  // F keeps the checkpoints and the head; R rebuilds all 80 blocks and the head's activations.
  const Bytes peak = one.simulation.metrics.memory.peak_memory_per_device[0];
  CHECK(peak == Bytes(kStatic + kCheckpoints + kHead + L * kLayer + kHead));
  CHECK(peak.as_double() / (1 << 30) == doctest::Approx(190.60).epsilon(0.001));
}

TEST_CASE("the trace shows each unit's recompute inside B and the unit in the memory counter") {
  // Two layers a stage, each its own unit (tests/cli/explain_recompute_per_unit.yaml without its
  // offload).
  Scenario sc = load_scenario_file(source("tests/cli/explain_recompute_per_unit.yaml"), registry());
  sc.memory.offload = OffloadSettings{};
  const ResolvedScenario r = resolve(sc);
  ChromeTraceWriter writer(sc.stages);
  const ScheduleRun run =
      run_schedule(r, *registry().find("1f1b"), sc.schedules.front(), {&writer});
  REQUIRE(run.simulation.status == RunStatus::Ok);
  const StageCost::BackwardRecompute& redo = run.stage_costs[0].backward_recompute;
  REQUIRE(redo.units == 2);
  TraceContext context;
  context.label = run.label;
  context.devices = run.table.devices;
  context.stage_costs = &run.stage_costs;
  const nlohmann::json events = nlohmann::json::parse(writer.to_json(context)).at("traceEvents");
  double b_start = -1, b_dur = 0;
  std::vector<std::pair<double, double>> units;  // (ts, dur) of B0.0's unit phases on GPU 0
  for (const auto& event : events) {
    if (event.at("ph") != "X" || event.at("pid") != 1) continue;
    const std::string name = event.at("name");
    if (name == "B0.0") {
      b_start = event.at("ts").get<double>();
      b_dur = event.at("dur").get<double>();
    }
    if (name.rfind("recompute unit ", 0) == 0 && name.find("of B0.0") != std::string::npos) {
      units.emplace_back(event.at("ts").get<double>(), event.at("dur").get<double>());
      CHECK(event.at("args").at("unit_bytes") == redo.unit.count());
    }
  }
  REQUIRE(b_start >= 0);
  REQUIRE(units.size() == 2);
  // Unit k starts at B's start + k / 2 of B and lasts half of B's recompute.
  const double redo_us = redo.time.seconds() * 1e6 / 2;
  CHECK(units[0].first == doctest::Approx(b_start));
  CHECK(units[1].first == doctest::Approx(b_start + b_dur / 2));
  CHECK(units[0].second == doctest::Approx(redo_us));
  // The memory counter steps up by the unit when B0.0 starts (device 0 then holds the
  // checkpoints of the 4 forwards 1F1B ran before it: 4 M_B), and down when it ends.
  bool up = false;
  for (const auto& event : events) {
    if (event.at("ph") != "C" || event.at("pid") != 1 || event.at("ts").get<double>() != b_start)
      continue;
    up = up || event.at("args").at("activation_bytes").get<std::int64_t>() ==
                   (run.stage_costs[0].activation * 4 + redo.unit).count();
  }
  CHECK(up);
}

TEST_CASE("FSDP gathers a unit once for its recompute and its backward: the recompute hides some") {
  // A small GPT (4 layers of hidden 1024, 1024 tokens a microbatch) with ZeRO-3 over 16 GPUs on
  // two DGX H100 nodes: each layer's 12.6M parameters (25 MB in bf16) all-gathered over the
  // network take longer than the layer's backward, so B waits on its prefetched gathers.
  auto stage = [](const std::string& memory) {
    const std::string yaml =
        "name: fsdp-recompute\npipeline: {stages: 1, microbatches: 4}\n"
        "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
        "cluster: {gpu: {preset: h100-sxm}}\ntopology: topologies/dgx-h100-2nodes.yaml\n"
        "parallelism: {dp: 16, zero: 3}\n" +
        memory + "schedules: [1f1b]\n";
    const Scenario sc = load_scenario_string(yaml, "s.yaml", source("scenarios"), registry());
    const ResolvedScenario r = resolve(sc);
    REQUIRE(r.model_costs);
    return std::make_pair(r.model_costs->stages[0], r.costs.stages[0]);
  };
  const auto [plain, plain_cost] = stage("");
  const auto [redo, redo_cost] = stage("memory: {recompute: {policy: full}}\n");
  const double t_r = redo.backward_input.recompute;
  REQUIRE(t_r > 0);
  REQUIRE(plain.backward_input.zero_comm > 0);
  // B's own compute is the same; the recompute is added to it as the forward of the 4 layers.
  CHECK(redo.backward_input.layers == plain.backward_input.layers);
  CHECK(t_r == doctest::Approx(plain.forward.layers + plain.forward.tp_comm));
  // The recompute runs on the parameters B gathered (no gather of its own) while FSDP prefetches
  // the next unit's: less of B's gathering is exposed, and B grows by less than T_R.
  CHECK(redo.backward_input.zero_comm < plain.backward_input.zero_comm);
  CHECK(redo_cost.backward_input - plain_cost.backward_input < Time::from_seconds(t_r));
  // F gathers as before.
  CHECK(redo.forward.zero_comm == plain.forward.zero_comm);
}
