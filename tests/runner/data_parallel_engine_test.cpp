// The data-parallel engines (`data_parallel.engine`, docs/parallelism.md "Data-parallel
// engines"): which collectives each framework runs, where, how large and named how, end to end.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "scenario_run_support.h"
#include "sim/engine/observer.h"
#include "sim/report/json_report.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::source;

namespace {

// A GPT layer of hidden h: 12 h^2 + 13 h parameters (QKV, output, MLP up and down with their
// biases, two LayerNorms); the embedding and the untied LM head V h each, the final norm 2 h.
constexpr double kH = 1024, kV = 32000, kLayers = 4;
constexpr double kLayer = 12 * kH * kH + 13 * kH;
constexpr double kEmbedding = kV * kH, kHead = kV * kH + 2 * kH;
constexpr double kParams = kEmbedding + kLayers * kLayer + kHead;

/// One stage (unless `stages`) of the small GPT on two DGX-H100 nodes, `par` and `dp` as given.
std::string gpt(const std::string& par, const std::string& dp = "", int stages = 1,
                const std::string& model_extra = "") {
  return "name: dp-engine\npipeline: {stages: " + std::to_string(stages) +
         ", microbatches: 4}\n"
         "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000" +
         model_extra +
         "}\n"
         "cluster: {gpu: {preset: h100-sxm}}\n"
         "topology: topologies/dgx-h100-2nodes.yaml\n"
         "parallelism: {" +
         par + "}\n" + (dp.empty() ? "" : "data_parallel: {" + dp + "}\n") + "schedules: [1f1b]\n";
}

Scenario load(const std::string& yaml) {
  return load_scenario_string(yaml, "dp.yaml", source("scenarios"), registry());
}

std::string load_error(const std::string& yaml) {
  try {
    load(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json report(const std::string& yaml) {
  const Scenario sc = load(yaml);
  nlohmann::json j = scenario_report_json(sc, run_scenario(sc, registry()));
  REQUIRE(j["results"][0]["status"] == "ok");
  return j;
}

std::map<std::string, nlohmann::json> collectives(const nlohmann::json& j) {
  return scenario_test::collectives_by_name(j);
}

double num(const nlohmann::json& c, const char* key) { return scenario_test::number(c, key); }

}  // namespace

TEST_CASE("zero 3 without an engine named: FSDP2, no end-of-step gradient collective") {
  // Before the engines, zero 3 reduce-scattered inside every backward and then ran a second
  // gradient collective ("dp all-reduce stage 0", fp32) at the end of the step.
  const nlohmann::json j = report(gpt("dp: 16, zero: 3"));
  CHECK(j["scenario"]["parallelism"]["data_parallel"]["engine"] == "fsdp2");
  const auto c = collectives(j);
  CHECK(c.count("dp all-reduce stage 0") == 0);
  CHECK(c.count("dp reduce-scatter stage 0") == 0);
  CHECK(c.count("dp reduce-scatter stage 0 (per B op)") == 1);
  CHECK(num(j["results"][0]["simulation"], "dp_sync_s") == 0.0);
  CHECK(num(j["results"][0]["simulation"], "exposed_dp_sync_s") == 0.0);
}

TEST_CASE("ZeRO 2/3 reduce inside the ops: no second gradient collective at the end of the step") {
  // Every engine that shards gradients reduce-scatters them in every backward; none runs an
  // end-of-step gradient collective over the same gradients again.
  for (const char* dp :
       {"engine: fsdp", "engine: fsdp2", "engine: deepspeed", "engine: megatron"}) {
    for (int zero : {2, 3}) {
      CAPTURE(dp);
      CAPTURE(zero);
      const nlohmann::json j = report(gpt("dp: 16, zero: " + std::to_string(zero), dp));
      const auto c = collectives(j);
      CHECK(c.count("dp reduce-scatter stage 0 (per B op)") == 1);
      for (const auto& entry : c) {
        const std::string& name =
            entry.first;  // a plain name: clang's lambdas cannot capture bindings
        CHECK_MESSAGE(name.find("(per ") != std::string::npos, name);  // only per-op lines
      }
      CHECK(num(j["results"][0]["simulation"], "dp_sync_s") == 0.0);
    }
  }
}

TEST_CASE("FSDP units: per-op all-gather and reduce-scatter bytes, unit by unit") {
  // fsdp2 over dp 16 (two nodes): units embedding, 4 layers, head, each gathered in bf16 before
  // F, the head kept for B (5 gathers), every unit's gradients reduce-scattered in fp32
  // (torchtitan's reduce_dtype) after B.
  const auto c = collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2")));
  const nlohmann::json& f = c.at("dp all-gather stage 0 (per F op)");
  const nlohmann::json& b = c.at("dp all-gather stage 0 (per B op)");
  const nlohmann::json& rs = c.at("dp reduce-scatter stage 0 (per B op)");
  CHECK(num(f, "count") == kLayers + 2);
  CHECK(num(f, "ranks") == 16);
  CHECK(num(f, "bytes") == doctest::Approx(2 * kParams).epsilon(1e-9));
  CHECK(num(b, "count") == kLayers + 1);
  CHECK(num(b, "bytes") == doctest::Approx(2 * (kParams - kHead)).epsilon(1e-9));
  CHECK(num(rs, "count") == kLayers + 2);
  CHECK(num(rs, "bytes") == doctest::Approx(4 * kParams).epsilon(1e-9));
  // reduce_dtype bf16 halves the reduce-scatter's bytes.
  const auto half =
      collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2, reduce_dtype: bf16")));
  CHECK(num(half.at("dp reduce-scatter stage 0 (per B op)"), "bytes") ==
        doctest::Approx(2 * kParams).epsilon(1e-9));
}

TEST_CASE("per-op collectives: named by the algorithm that ran, with their bus bandwidth") {
  // Each unit's collective is planned as the gradient buckets are (NCCL's choice under auto);
  // the line names what ran and its nccl-tests bus bandwidth: (n - 1) / n of the bytes of an
  // all-gather or reduce-scatter over n ranks, summed over the units, over the summed time.
  for (const char* asked : {"auto", "ring"}) {
    const std::string algorithm = asked;
    CAPTURE(algorithm);
    const auto c =
        collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2, algorithm: " + algorithm)));
    for (const char* line_name :
         {"dp all-gather stage 0 (per F op)", "dp reduce-scatter stage 0 (per B op)"}) {
      const std::string name = line_name;
      CAPTURE(name);
      const nlohmann::json& line = c.at(name);
      const std::string ran = line.at("algorithm");
      CHECK(!ran.empty());
      // Forced ring: every unit rings, in the protocol NCCL picks for its size ("ring/LL128").
      if (algorithm == "ring")
        CHECK((ran == "ring" || ran == "ring/LL128" || ran == "ring, ring/LL128" ||
               ran == "ring/LL128, ring"));
      const double bus = 15.0 / 16.0 * num(line, "bytes") / num(line, "simulated_s");
      CHECK(num(line, "bus_bandwidth_bytes_per_s") == doctest::Approx(bus).epsilon(1e-9));
    }
  }
}

TEST_CASE("the end-of-step collective is named by what it runs, its bytes those it moves") {
  // zero 0 (DDP): an all-reduce of the fp32 gradients; zero 1 (Megatron's distributed
  // optimizer): a reduce-scatter of the same bytes.
  const auto ddp = collectives(report(gpt("dp: 16")));
  const auto dist = collectives(report(gpt("dp: 16, zero: 1")));
  REQUIRE(ddp.count("dp all-reduce stage 0") == 1);
  REQUIRE(dist.count("dp reduce-scatter stage 0") == 1);
  CHECK(dist.count("dp all-reduce stage 0") == 0);
  CHECK(num(ddp.at("dp all-reduce stage 0"), "bytes") ==
        doctest::Approx(4 * kParams).epsilon(1e-9));
  CHECK(num(dist.at("dp reduce-scatter stage 0"), "bytes") ==
        doctest::Approx(4 * kParams).epsilon(1e-9));
  // DDP: 25 MiB buckets and its last bucket of 1 MiB (the parameters defined first).
  const double body = 4 * kParams - (1 << 20);
  CHECK(num(ddp.at("dp all-reduce stage 0"), "count") == std::ceil(body / (25.0 * (1 << 20))) + 1);
  // Megatron: max(40M, 1M x 16) = 40M parameters a bucket, fp32: 160 MB.
  CHECK(num(dist.at("dp reduce-scatter stage 0"), "count") == std::ceil(kParams / 40e6));
}

TEST_CASE("cp 8, dp 1, zero 3: FSDP shards over the 8 context-parallel ranks") {
  const std::string yaml =
      "name: cp-zero\npipeline: {stages: 1, microbatches: 2}\n"
      "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 8192, vocab: 32000, "
      "attention: flash}\n"
      "cluster: {gpu: {preset: h100-sxm}}\n"
      "topology: topologies/dgx-h100.yaml\n"
      "parallelism: {dp: 1, cp: 8, zero: 3}\nschedules: [1f1b]\n";
  const Scenario sc = load(yaml);
  CHECK(sc.parallelism.shard_group() == 8);
  const ResolvedScenario r = resolve(sc);
  REQUIRE(r.model_costs);
  // 18 bytes per parameter (bf16 weights 2, fp32 gradients 4, Adam 12) over 8 GPUs.
  CHECK(r.model_costs->stages[0].memory.static_memory.as_double() ==
        doctest::Approx(kParams * 18.0 / 8.0).epsilon(1e-6));
  const auto c = collectives(report(yaml));
  CHECK(num(c.at("dp all-gather stage 0 (per F op)"), "ranks") == 8);
  CHECK(num(c.at("dp reduce-scatter stage 0 (per B op)"), "ranks") == 8);
  CHECK(r.model_costs->stages[0].forward.zero_comm > 0.0);
}

TEST_CASE("FSDP2 under a pipeline: one gather per step, every unit's reduce-scatter at the end") {
  // torchtitan: reshard_after_forward false under PP; torch.distributed.pipelining's last
  // backward reduce-scatters unit after unit. Two stages of 2 layers: stage 0 holds the
  // embedding and 2 layers (3 units), stage 1 2 layers and the head (3 units).
  const nlohmann::json j = report(gpt("dp: 8, zero: 3", "engine: fsdp2", 2));
  const auto c = collectives(j);
  for (int s = 0; s < 2; ++s) {
    const std::string name = "dp reduce-scatter stage " + std::to_string(s);
    REQUIRE(c.count(name) == 1);
    CHECK(num(c.at(name), "count") == 3);
    CHECK(c.count("dp all-gather stage " + std::to_string(s) + " (per F op)") == 0);
  }
  CHECK(num(c.at("dp reduce-scatter stage 0"), "bytes") ==
        doctest::Approx(4 * (kEmbedding + 2 * kLayer)).epsilon(1e-9));
  // The gathered weights (2 bytes) and the fp32 unsharded gradients (4) stay all step beside
  // the 18 / 8 sharded bytes.
  const ResolvedScenario r = resolve(load(gpt("dp: 8, zero: 3", "engine: fsdp2", 2)));
  CHECK(r.model_costs->stages[1].memory.static_memory.as_double() ==
        doctest::Approx((2 * kLayer + kHead) * (18.0 / 8.0 + 6.0)).epsilon(1e-6));
  CHECK(r.model_costs->stages[0].forward.zero_comm == 0.0);
}

TEST_CASE("Megatron: buckets grow with dp, only the first stage is bucketed") {
  // dp 64 on 8 nodes: max(40M, 1M x 64) = 64M parameters a bucket on stage 0; stage 1 syncs its
  // gradients as one bucket after its last backward.
  const std::string yaml =
      "name: mg\npipeline: {stages: 2, microbatches: 4}\n"
      "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 1024, "
      "vocab: 32000, framework: megatron-core}\n"
      "cluster: {gpu: {preset: h100-sxm}}\n"
      "topology: {builder: multi-node, nodes: 16, gpus_per_node: 8,\n"
      "  nvlink: {bandwidth: 450GB/s, latency: 1us}, pcie: {bandwidth: "
      "64GB/s, latency: 1us},\n"
      "  gpus_per_pcie_switch: 2, nic: {bandwidth: 50GB/s, latency: 2us}, "
      "network: {latency: 1us}}\n"
      "parallelism: {dp: 64, zero: 1}\nschedules: [1f1b]\n";
  const nlohmann::json j = report(yaml);
  CHECK(j["scenario"]["parallelism"]["data_parallel"]["engine"] == "megatron");
  CHECK(j["scenario"]["parallelism"]["data_parallel"]["engine_from"] ==
        "model.framework megatron-core");
  const auto c = collectives(j);
  const double stage0 = num(c.at("dp reduce-scatter stage 0"), "bytes");
  CHECK(num(c.at("dp reduce-scatter stage 0"), "count") == std::ceil(stage0 / (64e6 * 4)));
  CHECK(num(c.at("dp reduce-scatter stage 1"), "count") == 1);
}

TEST_CASE("Megatron's parameter all-gather: behind the next forward, or exposed after the step") {
  const std::string base = gpt("dp: 16, zero: 1", "engine: megatron, overlap_param_gather: true");
  const std::string after = gpt("dp: 16, zero: 1", "engine: megatron, overlap_param_gather: false");
  const nlohmann::json hidden = report(base), exposed = report(after);
  const auto& h = hidden["results"][0]["simulation"];
  const auto& e = exposed["results"][0]["simulation"];
  // After the step the whole gather is in the iteration; before the forward only what the
  // forward's buckets do not hide (here the stage is one bucket of 40M parameters or less at
  // most: ceil(P / 40M) buckets, the first exposed).
  CHECK(num(e, "parameter_gather_s") > 0.0);
  CHECK(num(h, "parameter_gather_s") <= num(e, "parameter_gather_s") + 1e-12);
  CHECK(num(e, "iteration_time_s") - num(h, "iteration_time_s") ==
        doctest::Approx(num(e, "parameter_gather_s") - num(h, "parameter_gather_s")).epsilon(0.02));
}

TEST_CASE("HSDP: shard inside a node, all-reduce the shards across") {
  // dp 16 on two nodes, replicate 2: shard groups of 8 (one node), the gradient shard
  // all-reduced over the 2 nodes every backward; 18 bytes a parameter over 8 GPUs.
  const Scenario sc = load(gpt("dp: 16, zero: 3", "engine: fsdp2, replicate: 2"));
  CHECK(sc.parallelism.shard_group() == 8);
  const ResolvedScenario hsdp = resolve(sc);
  const ResolvedScenario flat = resolve(load(gpt("dp: 16, zero: 3", "engine: fsdp2")));
  CHECK(hsdp.model_costs->stages[0].memory.static_memory.as_double() ==
        doctest::Approx(kParams * 18.0 / 8.0).epsilon(1e-6));
  const auto c = collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2, replicate: 2")));
  CHECK(num(c.at("dp all-gather stage 0 (per F op)"), "ranks") == 8);
  // Inside a node the gathers run on NVLink: faster than over the two nodes' NICs.
  CHECK(hsdp.model_costs->stages[0].forward.zero_comm <
        flat.model_costs->stages[0].forward.zero_comm);
}

TEST_CASE("data_parallel keys that an engine does not run are refused by name") {
  CHECK(load_error(gpt("dp: 16, zero: 1", "engine: ddp")).find("zero must be 0") !=
        std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp", 2)).find("engine fsdp2") !=
        std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: deepspeed", 2))
            .find("incompatible with pipeline parallelism") != std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp2, bucket: 25MiB")).find("remove bucket") !=
        std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp2, overlap: false")).find("does not run") !=
        std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp2, fp8_param_gather: true"))
            .find("model.fp8_linear") != std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: deepspeed, fp8_param_gather: true"))
            .find("engine fsdp2 or megatron") != std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp2, replicate: 3")).find("must divide") !=
        std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3", "engine: fsdp2, overlap_param_gather: true"))
            .find("engine megatron") != std::string::npos);
  CHECK(load_error(gpt("dp: 16, zero: 3, zero_overlap: false", "engine: fsdp2", 2))
            .find("no collective inside") != std::string::npos);
  CHECK(load_error(gpt("dp: 1, zero: 3")).find("dp x cp > 1") != std::string::npos);
}

TEST_CASE("fp8_param_gather: the linear weights gathered in 1 byte") {
  const std::string fp8 = ", fp8_linear: true";
  const auto bf16 = collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2", 1, fp8)));
  const auto one =
      collectives(report(gpt("dp: 16, zero: 3", "engine: fsdp2, fp8_param_gather: true", 1, fp8)));
  // Each layer's weights less its two LayerNorms' 4 h go as FP8; the embedding and head stay.
  const double linear = kLayers * (kLayer - 4 * kH);
  CHECK(num(one.at("dp all-gather stage 0 (per F op)"), "bytes") ==
        doctest::Approx(num(bf16.at("dp all-gather stage 0 (per F op)"), "bytes") - linear)
            .epsilon(1e-9));
}

namespace {

/// The names of the collectives the replay of `yaml`'s 1F1B reports to a trace.
std::vector<std::string> traced_collectives(const std::string& yaml) {
  struct Names : EngineObserver {
    std::vector<std::string> names;
    void on_collective(const CollectiveEvent& e) override { names.push_back(e.name); }
  } names;
  const Scenario sc = load(yaml);
  const ResolvedScenario resolved = resolve(sc);
  run_schedule(resolved, *registry().find("1f1b"), sc.schedules.front(), {&names});
  return names.names;
}

bool any_named(const std::vector<std::string>& names, const std::string& prefix,
               const std::string& suffix = "") {
  for (const std::string& n : names) {
    if (n.rfind(prefix, 0) == 0 && n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the trace names each data-parallel collective by what it runs") {
  // FSDP2: the exposed part of each op's gathers at its start, of its reduce-scatters at its
  // end; no end-of-step collective.
  const std::vector<std::string> fsdp = traced_collectives(gpt("dp: 16, zero: 3"));
  CHECK(any_named(fsdp, "dp all-gather F", "(exposed)"));
  CHECK(any_named(fsdp, "dp reduce-scatter B", "(exposed)"));
  CHECK_FALSE(any_named(fsdp, "dp all-reduce"));
  CHECK_FALSE(any_named(fsdp, "dp reduce-scatter stage"));
  // The distributed optimizer's buckets are reduce-scatters; DDP's all-reduces.
  const std::vector<std::string> dist = traced_collectives(gpt("dp: 16, zero: 1"));
  // Each named with the algorithm it ran: "dp reduce-scatter (ring) stage 0 bucket 0".
  CHECK(any_named(dist, "dp reduce-scatter (", ") stage 0 bucket 0"));
  CHECK_FALSE(any_named(dist, "dp all-reduce"));
  CHECK(any_named(traced_collectives(gpt("dp: 16")), "dp all-reduce (", ") stage 0 bucket 0"));
}
