// The DeepSeek-V3-like scenario (scenarios/moe/deepseek-v3-like.yaml, docs/moe.md):
// 1F1B and ZB-H1 pay the expert all-to-all exposed, DualPipe's fused F&B ops hide it under the
// other microbatch's compute; without MoE the overlap has nothing to hide. And the switches of
// a small expert-parallel scenario: a2a_overlap, max_nodes, imbalance.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/report/chrome_trace_writer.h"
#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "sim/report/verdict.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

// A two-stage MoE model on four two-GPU nodes (EP 4), small enough to run in milliseconds.
std::string small_moe_scenario(int microbatches) {
  return "pipeline: {stages: 2, microbatches: " + std::to_string(microbatches) + "}\n" + R"(
model: {layers: 4, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000, mlp: swiglu,
        bias: false, dropout: false, moe: {experts: 16, top_k: 4, expert_ffn_hidden: 1024}}
cluster: {gpu: {preset: h800}}
topology: {builder: multi-node, nodes: 4, gpus_per_node: 2,
           nvlink: {bandwidth: 160GB/s, latency: 1us}, pcie: {bandwidth: 64GB/s, latency: 1us},
           gpus_per_pcie_switch: 1, nic: {bandwidth: 50GB/s, latency: 2us},
           network: {latency: 1us}}
parallelism: {dp: 4, ep: 4, order: [tp, dp, pp]}
schedules: [1f1b]
)";
}

const Registry& builtins() {
  static const Registry r = builtin_registry();
  return r;
}

/// label -> the simulation level of the JSON report.
std::map<std::string, nlohmann::json> results_of(const std::string& yaml, const std::string& dir) {
  const Scenario sc = load_scenario_string(yaml, "moe.yaml", dir, builtins());
  const nlohmann::json report = scenario_report_json(sc, run_scenario(sc, builtins()));
  std::map<std::string, nlohmann::json> out;
  for (const auto& r : report["results"]) {
    REQUIRE(r["status"] == "ok");
    out[r["label"].get<std::string>()] = r["simulation"];
  }
  return out;
}

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

double at(const nlohmann::json& sim, const char* key) { return sim.at(key).get<double>(); }

}  // namespace

TEST_CASE("deepseek-v3-like: DualPipe hides the all-to-all 1F1B and ZB-H1 expose") {
  const std::string dir = std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/moe";
  const YAML::Node file = YAML::LoadFile(dir + "/deepseek-v3-like.yaml");
  auto moe = results_of(emit(file), dir);
  const double t_1f1b = at(moe["1f1b"], "iteration_time_s");
  const double t_zb = at(moe["zb-h1"], "iteration_time_s");
  const double t_dual = at(moe["dualpipe"], "iteration_time_s");
  for (const char* s : {"1f1b", "zb-h1"}) {
    CHECK(at(moe[s], "a2a_s") > 0);
    CHECK(at(moe[s], "a2a_exposed_s") == at(moe[s], "a2a_s"));  // nothing pairs F with B
  }
  const nlohmann::json& dual = moe["dualpipe"];
  const double exposed = at(dual, "a2a_exposed_s") / at(dual, "a2a_s");
  MESSAGE("DualPipe exposes " << exposed << " of its all-to-all; iteration 1F1B " << t_1f1b
                              << " s, ZB-H1 " << t_zb << " s, DualPipe " << t_dual << " s");
  // What DeepSeek's dualpipe.py implies (schedules/generators/dualpipe_order.h): only the F&B
  // pairs of steps 4 and 5 overlap; a device at distance h from the nearest pipeline end runs
  // 3p/2 - h - 1 of its m forwards and as many backwards unfused, and the middle devices
  // (h = p/2 - 1) one more (their first pair is split): p + 1 of m. Those pay their all-to-all in
  // full, so at least (p + 1) / m of a middle device's all-to-all is exposed (its two stages have
  // the largest all-to-all time here). The issue's "under 10%" needs m of several hundred.
  // At most, the end devices' 3p/2 - 1 unfused ops of m, plus what the fused pairs leave (under
  // 10% of theirs, checked below with more microbatches).
  const double p = 16, m = 120;
  CHECK(exposed >= (p + 1) / m - 1e-6);
  CHECK(exposed < (3 * p / 2 - 1) / m + 0.1);
  // The all-to-all kernels hold 20 of 132 SMs while they hide: the fused pairs' compute is slower
  // by that share of the hidden time; 1F1B and ZB-H1 hide nothing, so lose nothing.
  CHECK(at(dual, "a2a_slowdown_s") > 0);
  CHECK(at(moe["1f1b"], "a2a_slowdown_s") == 0);
  CHECK(t_dual < t_zb);
  CHECK(t_zb < t_1f1b);

  // communication.all_to_all: idle (the ablation) times the all-to-all on an idle network: no
  // schedule is faster sharing the links; there every device's all-to-all is the costs' time,
  // which contention only stretches. DualPipe's transfers to its neighbours cross NICs its
  // hidden all-to-all holds, so they wait longer (docs/moe.md).
  YAML::Node quiet_file = YAML::Clone(file);
  quiet_file["communication"]["all_to_all"] = "idle";
  auto quiet = results_of(emit(quiet_file), dir);
  for (const char* s : {"1f1b", "zb-h1", "dualpipe"}) {
    CAPTURE(s);
    CHECK(at(moe[s], "iteration_time_s") >= at(quiet[s], "iteration_time_s"));
    CHECK(at(moe[s], "a2a_s") >= at(quiet[s], "a2a_s") - 1e-9);
  }
  CHECK(at(dual, "exposed_comm_s") > at(quiet["dualpipe"], "exposed_comm_s"));

  // Four times the microbatches: the unfused ops stay as many, the added microbatches all run in
  // fused pairs, which hide more than 90% of their all-to-all; the exposed share falls under
  // 10%.
  YAML::Node longer = YAML::Clone(file);
  longer["pipeline"]["microbatches"] = 4 * 120;
  longer["schedules"] = YAML::Load("[dualpipe]");
  const nlohmann::json dual4 = results_of(emit(longer), dir)["dualpipe"];
  const double added = at(dual4, "a2a_s") - at(dual, "a2a_s");
  const double added_exposed = at(dual4, "a2a_exposed_s") - at(dual, "a2a_exposed_s");
  MESSAGE("with 480 microbatches DualPipe exposes "
          << at(dual4, "a2a_exposed_s") / at(dual4, "a2a_s") << " of its all-to-all");
  CHECK(added_exposed < 0.1 * added);
  CHECK(at(dual4, "a2a_exposed_s") < 0.1 * at(dual4, "a2a_s"));

  // Without the SM share DualPipe is faster (nothing slows its hidden compute) and exposes more
  // (the compute under each all-to-all ends sooner).
  YAML::Node free_sms = YAML::Clone(file);
  free_sms.remove("overlap");
  free_sms["schedules"] = YAML::Load("[dualpipe]");
  const nlohmann::json dual_free = results_of(emit(free_sms), dir)["dualpipe"];
  CHECK(at(dual_free, "iteration_time_s") < t_dual);
  CHECK(at(dual_free, "a2a_exposed_s") > at(dual, "a2a_exposed_s"));
  CHECK(at(dual_free, "a2a_slowdown_s") == 0);

  // The same scenario with moe removed (dense layers of ffn_hidden, no EP): no all-to-all, and
  // DualPipe's lead over ZB-H1 shrinks to what its bubbles give.
  YAML::Node dense = YAML::Clone(file);
  dense["model"]["moe"] = "none";
  dense["parallelism"].remove("ep");
  dense.remove("overlap");
  auto plain = results_of(emit(dense), dir);
  for (const auto& [label, sim] : plain) CHECK(sim["a2a_s"].is_null());
  const double lead_moe = t_zb / t_dual - 1.0;
  const double lead_dense =
      at(plain["zb-h1"], "iteration_time_s") / at(plain["dualpipe"], "iteration_time_s") - 1.0;
  MESSAGE("DualPipe's lead over ZB-H1: " << lead_moe << " with MoE, " << lead_dense << " without");
  CHECK(lead_dense < lead_moe / 3);
}

TEST_CASE("expert parallelism switches: a2a_overlap, max_nodes, imbalance") {
  const std::string base = "name: moe-switches\n" + small_moe_scenario(8);
  const YAML::Node root = YAML::Load(base);
  auto sim_with = [&](const char* path1, const char* key, const YAML::Node& v) {
    YAML::Node n = YAML::Clone(root);
    if (key) n[path1][key] = v;
    return results_of(emit(n), BUBBLESIM_SOURCE_DIR)["1f1b"];
  };
  const nlohmann::json plain = sim_with("model", nullptr, YAML::Node());
  CHECK(at(plain, "a2a_exposed_s") == at(plain, "a2a_s"));
  const nlohmann::json overlap = sim_with("parallelism", "a2a_overlap", YAML::Node(true));
  // The pairs run the same all-to-alls (contention stretches them by what they meet).
  CHECK(at(overlap, "a2a_s") == doctest::Approx(at(plain, "a2a_s")).epsilon(0.05));
  CHECK(at(overlap, "a2a_exposed_s") < at(plain, "a2a_exposed_s"));
  // Each B and the F after it run as one F&B op (a2a_pairing.h), which waits for both inputs:
  // in plain 1F1B a device's pair then waits for its neighbour's whole pair, so the hidden
  // all-to-all is paid for in stalls (Megatron offers the overlap only without pipelining or
  // with interleaving). Interleaved 1F1B's pairs join chunks that do not wait on each other.
  YAML::Node both = YAML::Clone(root);
  both["schedules"] = YAML::Load("[1f1b, {name: interleaved-1f1b, params: {chunks: 2}}]");
  const auto apart = results_of(emit(both), BUBBLESIM_SOURCE_DIR);
  both["parallelism"]["a2a_overlap"] = true;
  const auto paired = results_of(emit(both), BUBBLESIM_SOURCE_DIR);
  const double i_apart = at(apart.at("interleaved-1f1b"), "iteration_time_s");
  const double i_paired = at(paired.at("interleaved-1f1b"), "iteration_time_s");
  MESSAGE("a2a_overlap: 1f1b " << at(plain, "iteration_time_s") << " -> "
                               << at(overlap, "iteration_time_s") << " s, interleaved " << i_apart
                               << " -> " << i_paired << " s");
  CHECK(i_paired < i_apart);
  YAML::Node limited = YAML::Clone(root);
  limited["model"]["moe"]["max_nodes"] = 1;  // one remote copy per token instead of top_k
  const nlohmann::json one_node = results_of(emit(limited), BUBBLESIM_SOURCE_DIR)["1f1b"];
  CHECK(at(one_node, "a2a_s") < at(plain, "a2a_s"));
  limited["model"]["moe"]["max_nodes"] = 0;  // 0 is the default, no limit: lifts a preset's
  const nlohmann::json unlimited = results_of(emit(limited), BUBBLESIM_SOURCE_DIR)["1f1b"];
  CHECK(at(unlimited, "a2a_s") == at(plain, "a2a_s"));
  YAML::Node hot = YAML::Clone(root);
  hot["model"]["moe"]["imbalance"] = 1.5;  // the hottest GPU's experts get 1.5 x the tokens
  const nlohmann::json skewed = results_of(emit(hot), BUBBLESIM_SOURCE_DIR)["1f1b"];
  CHECK(at(skewed, "iteration_time_s") > at(plain, "iteration_time_s"));
  // The imbalance moves compute, not bytes: on an idle network the all-to-all is the same (sharing
  // links, the longer ops change which transfers it meets).
  YAML::Node hot_idle = YAML::Clone(hot), plain_idle = YAML::Clone(root);
  hot_idle["communication"]["all_to_all"] = "idle";
  plain_idle["communication"]["all_to_all"] = "idle";
  CHECK(at(results_of(emit(hot_idle), BUBBLESIM_SOURCE_DIR)["1f1b"], "a2a_s") ==
        at(results_of(emit(plain_idle), BUBBLESIM_SOURCE_DIR)["1f1b"], "a2a_s"));
}

TEST_CASE("moe.imbalance: the trace's expert phase slows by the hottest expert's share") {
  // 1F1B pays its all-to-all exposed, so an F op's growth is its expert phase's growth alone.
  const std::string yaml = "name: moe-imbalance\n" + small_moe_scenario(4);
  // Device 0's first F: its op slice and its expert-phase slice.
  struct Slices {
    double op_us = 0, phase_us = 0;
    std::string phase_name;
    nlohmann::json args;
  };
  auto trace = [&](double imbalance) {
    YAML::Node n = YAML::Load(yaml);
    n["model"]["moe"]["imbalance"] = imbalance;
    const Scenario sc = load_scenario_string(emit(n), "moe.yaml", BUBBLESIM_SOURCE_DIR, builtins());
    ChromeTraceWriter writer(sc.stages);
    const ScheduleRun run =
        run_schedule(resolve(sc), *builtins().find("1f1b"), sc.schedules.front(), {&writer});
    REQUIRE(run.simulation.status == RunStatus::Ok);
    TraceContext context{run.label, run.table.devices, sc.communication.topology.get(),
                         sc.communication.placement};
    Slices out;
    const nlohmann::json events = nlohmann::json::parse(writer.to_json(context)).at("traceEvents");
    for (const auto& e : events) {
      if (e.at("ph") != "X" || e.at("pid") != 1) continue;
      const std::string name = e.at("name");
      if (name == "F0.0") out.op_us = e.at("dur").get<double>();
      if (name.rfind("routed experts F0.0", 0) == 0) {
        out.phase_us = e.at("dur").get<double>();
        out.phase_name = name;
        out.args = e.at("args");
      }
    }
    return out;
  };
  const Slices even = trace(1.0), hot = trace(1.5);
  REQUIRE(even.phase_us > 0);
  REQUIRE(hot.phase_us > 0);
  MESSAGE("routed experts of F0.0: " << even.phase_us << " us uniform, " << hot.phase_us
                                     << " us at imbalance 1.5 (" << hot.phase_name << ")");
  CHECK(even.phase_name == "routed experts F0.0");  // nothing to show at uniform routing
  CHECK(even.args.at("imbalance_ms").get<double>() == doctest::Approx(0.0));
  // The hottest GPU's experts get 1.5x the mean tokens: 1.5x the expert GEMM rows, so their phase
  // takes longer, by no more than the 1.5x of a fixed GEMM efficiency (larger GEMMs run no
  // slower), and the op grows by exactly the phase's growth.
  CHECK(hot.phase_us > even.phase_us * 1.2);
  CHECK(hot.phase_us <= even.phase_us * 1.5 + 1e-3);
  CHECK(hot.args.at("uniform_routing_ms").get<double>() * 1e3 ==
        doctest::Approx(even.phase_us).epsilon(1e-6));
  CHECK(hot.op_us - even.op_us == doctest::Approx(hot.phase_us - even.phase_us).epsilon(1e-6));
  CHECK(hot.phase_name.find("hottest expert's load") != std::string::npos);
}

TEST_CASE(
    "expert memory: the routed experts' static bytes per GPU follow E / ep, in the JSON and text "
    "reports") {
  auto run = [](int ep, bool with_budget) {
    std::string yaml = "name: moe-memory\n" + small_moe_scenario(4);
    yaml.replace(yaml.find("ep: 4"), 5, "ep: " + std::to_string(ep));
    if (with_budget) yaml += "memory: {budget: 80GiB}\n";
    const Scenario sc = load_scenario_string(yaml, "moe.yaml", ".", builtins());
    const ScenarioRun result = run_scenario(sc, builtins());
    return std::make_pair(scenario_report_json(sc, result),
                          scenario_report_text(sc, result, ReportOptions{}));
  };
  const auto [json4, text4] = run(4, true);
  const auto [json2, text2] = run(2, false);
  const nlohmann::json& costs = json4["scenario"]["costs"];
  // Two MoE layers per stage, 16 / 4 experts on a GPU, each a SwiGLU MLP of 3 x 2048 x 1024;
  // weights 2 + fp32 gradients 4 + fp32 master and Adam moments 12 bytes per parameter.
  const double per_layer = 16.0 / 4.0 * 3.0 * 2048.0 * 1024.0;
  for (std::size_t s = 0; s < 2; ++s) {
    const double expert_static = costs["expert_static_memory_bytes"][s].get<double>();
    CHECK(expert_static == doctest::Approx(2.0 * per_layer * 18.0));
    CHECK(expert_static < costs["static_memory_bytes"][s].get<double>());
    // Half the expert-parallel group: twice the experts per GPU.
    CHECK(json2["scenario"]["costs"]["expert_static_memory_bytes"][s].get<double>() ==
          doctest::Approx(2.0 * expert_static));
    const double kept = costs["expert_activation_memory_bytes"][s].get<double>();
    CHECK(kept > 0);
    CHECK(kept < costs["activation_memory_bytes"][s].get<double>());
  }
  // Text: the stage-cost table always, the per-device memory table when it is shown.
  CHECK(text2.find("expert static") != std::string::npos);
  CHECK(text4.find("expert act/mb") != std::string::npos);
  // A dense model's reports have no expert columns.
  std::string dense = "name: dense\n" + small_moe_scenario(4);
  dense.replace(dense.find(", moe: {"), dense.find("}}") - dense.find(", moe: {") + 1, "");
  dense.replace(dense.find("ep: 4"), 5, "ep: 1");
  const Scenario sc = load_scenario_string(dense, "dense.yaml", ".", builtins());
  const nlohmann::json j = scenario_report_json(sc, run_scenario(sc, builtins()));
  CHECK_FALSE(j["scenario"]["costs"].contains("expert_static_memory_bytes"));
}

TEST_CASE("parallelism.order with ep: where the expert-parallel ranks sit sets the all-to-all") {
  // 2 stages x dp 4 on four nodes of two GPUs; EP 2 within dp. [tp, ep, dp, pp]: the two ep
  // ranks are neighbouring dp ranks (one node, NVLink), as without ep in the order;
  // [tp, dp, ep, pp]: they are dp / ep = 2 ranks apart (two nodes, the NICs): a slower a2a.
  auto a2a = [](const std::string& order) {
    std::string yaml = "name: moe-order\n" + small_moe_scenario(4);
    yaml.replace(yaml.find("ep: 4, order: [tp, dp, pp]"), 26, "ep: 2, order: " + order);
    return at(results_of(yaml, ".")["1f1b"], "a2a_s");
  };
  const double plain = a2a("[tp, dp, pp]");
  CHECK(a2a("[tp, ep, dp, pp]") == plain);
  CHECK(a2a("[tp, dp, ep, pp]") > 1.5 * plain);
}

TEST_CASE("a2a_overlap on a one-chunk pipeline: the verdict says it is usually slower") {
  YAML::Node root = YAML::Load("name: moe-note\n" + small_moe_scenario(8));
  root["schedules"] = YAML::Load("[1f1b, {name: interleaved-1f1b, params: {chunks: 2}}]");
  auto notes_of = [&](bool overlap) {
    root["parallelism"]["a2a_overlap"] = overlap;
    const Scenario sc =
        load_scenario_string(emit(root), "moe.yaml", BUBBLESIM_SOURCE_DIR, builtins());
    const ScenarioRun run = run_scenario(sc, builtins());
    const std::vector<std::string> notes = make_verdict(sc, run).notes;
    // The text report shows them under the verdict.
    const bool shown = scenario_report_text(sc, run).find("note: 1f1b: parallelism.a2a_overlap") !=
                       std::string::npos;
    CHECK(shown == !notes.empty());
    return notes;
  };
  CHECK(notes_of(false).empty());
  const std::vector<std::string> notes = notes_of(true);
  // 1F1B (one chunk per device) is named; interleaved 1F1B, whose pairs do not wait, is not.
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].rfind("note: 1f1b: parallelism.a2a_overlap paired ", 0) == 0);
  CHECK(notes[0].find("usually slower") != std::string::npos);
}
