// The default path (docs/first-principles.md): a scenario that names a GPU preset and no
// `first_principles` runs every mechanism the preset gives numbers for, the report lists which
// ran and why the others did not, and `first_principles: false` is the idealised roofline.
#include <doctest/doctest.h>

#include <string>

#include "scenario_run_support.h"
#include "sim/report/json_report.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::source;

namespace {

/// A 2-stage GPT pipeline with TP 2 on one DGX node: every mechanism has something to act on
/// (TP collectives for nccl, GEMMs for the waves, 4 GPUs for the slowest chip, the step).
std::string scenario(const std::string& gpu) {
  return R"(
name: default-path
pipeline: {stages: 2, microbatches: 4}
model: {layers: 4, hidden: 2048, heads: 16, seq_len: 2048, micro_batch_size: 1, vocab: 32000}
cluster: {gpu: )" +
         gpu + R"(}
topology: topologies/dgx-h100-2nodes.yaml
parallelism: {tp: 2}
iteration: {count: 2, barrier: global}
schedules: [1f1b]
)";
}

nlohmann::json report(const std::string& gpu) {
  const Scenario sc =
      load_scenario_string(scenario(gpu), "default.yaml", source("scenarios"), registry());
  nlohmann::json j = scenario_report_json(sc, run_scenario(sc, registry()));
  REQUIRE(j["results"][0]["status"] == "ok");
  return j;
}

double iteration_s(const nlohmann::json& j) {
  return j["results"][0]["simulation"]["iteration_time_s"].get<double>();
}

}  // namespace

TEST_CASE("default path: no first_principles key runs every mechanism the preset carries") {
  const nlohmann::json plain = report("{preset: a100-80g}");
  const nlohmann::json& fp = plain["scenario"]["cluster"]["gpu"]["first_principles"];
  CHECK(fp["source"] == "the GPU preset's defaults");
  // The a100-80g preset gives NCCL's bus bandwidth, the SM count and tile, the HBM bandwidth, the
  // chip spread and the compute capability: those five run, with the numbers they used.
  CHECK(fp["on"]["nccl"]["nvlink_busbw_bytes_per_s"].get<double>() == doctest::Approx(235e9));
  CHECK(fp["on"]["gemm_waves"]["sms"] == 108);
  CHECK(fp["on"]["optimizer_step"] == true);
  CHECK(fp["on"]["slowest_gpu"]["chip_spread"].get<double>() == doctest::Approx(0.0076));
  CHECK(fp["on"]["nccl_tuning"]["compute_capability"].get<double>() == doctest::Approx(8.0));
  // Its sustained clock is not given (measured above the curve's ceiling), no framework names an
  // attention kernel: both off, each with its reason.
  CHECK_FALSE(fp["on"].contains("sustained_clock"));
  CHECK(fp["off"]["sustained_clock"].get<std::string>().find("a100-80g preset gives no") !=
        std::string::npos);
  CHECK(fp["off"]["attention_kernels"].get<std::string>().find("attention_backend") !=
        std::string::npos);
  // The default is exactly the five named switches, and differs from the idealised roofline.
  const nlohmann::json named = report(
      "{preset: a100-80g, first_principles: {nccl: true, gemm_waves: true, optimizer_step: true, "
      "slowest_gpu: true, nccl_tuning: true}}");
  CHECK(named["scenario"]["cluster"]["gpu"]["first_principles"]["source"] ==
        "cluster.gpu.first_principles");
  CHECK(iteration_s(named) == iteration_s(plain));
  const nlohmann::json idealised = report("{preset: a100-80g, first_principles: false}");
  CHECK(idealised["scenario"]["cluster"]["gpu"]["first_principles"]["on"].empty());
  CHECK(idealised["scenario"]["cluster"]["gpu"]["first_principles"]["off"]["gemm_waves"] ==
        "cluster.gpu.first_principles: false");
  // Every mechanism adds time: tile waves, NCCL's bandwidth below the link rate, the slowest
  // of 4 chips, Megatron's optimizer passes.
  CHECK(iteration_s(plain) > iteration_s(idealised));
}

TEST_CASE("default path: the H100 preset leaves off what was measured on H200s only") {
  const nlohmann::json h100 = report("{preset: h100-sxm}");
  const nlohmann::json& fp = h100["scenario"]["cluster"]["gpu"]["first_principles"];
  for (const char* key : {"sustained_clock", "slowest_gpu"}) {
    CAPTURE(key);
    CHECK_FALSE(fp["on"].contains(key));
    CHECK(fp["off"][key].get<std::string>().find("h100-sxm preset gives no") != std::string::npos);
  }
  const nlohmann::json h200 = report("{preset: h200}");
  const nlohmann::json& on = h200["scenario"]["cluster"]["gpu"]["first_principles"]["on"];
  CHECK(on["sustained_clock"].get<double>() == doctest::Approx(0.902));
  CHECK(on["slowest_gpu"]["chip_spread"].get<double>() == doctest::Approx(0.0126));
}
