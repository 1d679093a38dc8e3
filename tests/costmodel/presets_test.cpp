// Presets and the model / GPU readers: every model preset's parameter count matches its card within
// 1%, overrides win, unknown names and bad values are located errors.
#include "sim/costmodel/presets.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <utility>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_costs.h"
#include "sim/costmodel/model_reader.h"
#include "sim/costmodel/op_timing.h"

using namespace bubblesim;

namespace {

std::optional<TransformerModel> model_of(const std::string& yaml, DiagnosticList& d) {
  YamlDocument doc = YamlDocument::load_string(yaml, "s.yaml", d);
  return read_transformer_model(doc.root().child("model"), d);
}

std::optional<GpuSpec> gpu_of(const std::string& yaml, const TransformerModel* m,
                              DiagnosticList& d) {
  YamlDocument doc = YamlDocument::load_string(yaml, "s.yaml", d);
  return read_gpu_spec(doc.root().child("gpu"), m, d);
}

std::string first_error(const DiagnosticList& d) {
  return d.empty() ? "" : d.items().front().render();
}

}  // namespace

TEST_CASE("every model preset reads and matches its published parameter count") {
  const Presets& p = Presets::builtin();
  REQUIRE(p.model_names() == std::vector<std::string>{"llama3-8b", "llama3-70b", "llama3-405b",
                                                      "gpt3-175b", "mixtral-8x7b", "deepseek-v3",
                                                      "deepseek-v2-lite"});
  for (const std::string& name : p.model_names()) {
    DiagnosticList d;
    auto m = model_of("model: {preset: " + name + "}\n", d);
    INFO(name << ": " << first_error(d));
    REQUIRE(m.has_value());
    const double published = p.model(name)->child("parameters").raw().as<double>();
    CHECK(model_parameters(*m) == doctest::Approx(published).epsilon(0.01));
  }
}

TEST_CASE("model presets: overrides win, the rest is the preset's") {
  DiagnosticList d;
  auto m = model_of("model: {preset: llama3-70b, seq_len: 4096, micro_batch_size: 2}\n", d);
  REQUIRE(m.has_value());
  CHECK(m->layers == 80);
  CHECK(m->kv() == 8);
  CHECK(m->seq_len == 4096);
  CHECK(m->micro_batch_size == 2);
  CHECK(m->mlp.kind == MlpKind::Swiglu);
  CHECK_FALSE(m->embedding.tied);
  CHECK(transformer_model_json(*m)["preset"] == "llama3-70b");

  DiagnosticList bad;
  CHECK_FALSE(model_of("model: {preset: llama4}\n", bad).has_value());
  CHECK(first_error(bad).find("s.yaml:1:17: error: model.preset: 'llama4'") == 0);
  DiagnosticList gqa;
  CHECK_FALSE(model_of("model: {layers: 2, hidden: 64, heads: 8, kv_heads: 3, seq_len: 16}\n", gqa)
                  .has_value());
  CHECK(first_error(gqa).find("kv_heads 3 must divide heads 8") != std::string::npos);
  DiagnosticList missing;
  CHECK_FALSE(model_of("model: {hidden: 64, heads: 8, seq_len: 16}\n", missing).has_value());
  CHECK(first_error(missing).find("missing required key 'layers'") != std::string::npos);
}

TEST_CASE("GPU presets: the dtype's peak, datasheet values, the roofline curve") {
  const Presets& p = Presets::builtin();
  REQUIRE(p.gpu_names() == std::vector<std::string>{"a100-40g", "a100-80g", "h100-sxm", "h200",
                                                    "b200", "mi300x", "h800"});
  TransformerModel m;
  m.dtype.name = "bf16";
  DiagnosticList d;
  auto h100 = gpu_of("gpu: {preset: h100-sxm}\n", &m, d);
  REQUIRE(h100.has_value());
  CHECK(h100->flops.flops_per_second() == doctest::Approx(989.4e12));
  CHECK(h100->memory_bandwidth->bytes_per_second() == doctest::Approx(3.35e12));
  CHECK(h100->memory->count() == 80'000'000'000LL);
  CHECK(h100->efficiency.kind == EfficiencyModel::Kind::Roofline);
  CHECK_FALSE(h100->efficiency.explicit_given);
  m.dtype.name = "fp8";
  auto fp8 = gpu_of("gpu: {preset: h100-sxm, efficiency: 0.4}\n", &m, d);
  REQUIRE(fp8.has_value());
  CHECK(fp8->flops.flops_per_second() == doctest::Approx(1978.9e12));
  CHECK(fp8->efficiency.kind == EfficiencyModel::Kind::Constant);
  CHECK(fp8->efficiency.explicit_given);
  CHECK_FALSE(gpu_of("gpu: {preset: a100-80g}\n", &m, d).has_value());  // no FP8 on Ampere
  CHECK(first_error(d).find("the a100-80g preset has no fp8 peak") != std::string::npos);

  DiagnosticList roof;
  CHECK_FALSE(
      gpu_of("gpu: {flops: 1PFLOPS, efficiency: {gemm_max: 0.7}}\n", nullptr, roof).has_value());
  CHECK(first_error(roof).find("needs the GPU's memory bandwidth") != std::string::npos);
  DiagnosticList ok;
  auto custom = gpu_of(
      "gpu: {flops: 1PFLOPS, memory_bandwidth: 2TB/s, efficiency: {gemm_max: 0.7, "
      "gemm_overhead: 4us, attention: {forward: 0.5}}}\n",
      nullptr, ok);
  REQUIRE(custom.has_value());
  CHECK(custom->efficiency.gemm_overhead_s == doctest::Approx(4e-6));
  CHECK(custom->efficiency.attention_backward == 0.5);  // the default where not given
  CHECK(presets_text().find("source of memory_bandwidth: H100 datasheet") != std::string::npos);
}

TEST_CASE("every value of every GPU preset names its source") {
  const Presets& p = Presets::builtin();
  for (const std::string& name : p.gpu_names()) {
    const YamlNode node = *p.gpu(name);
    const YamlNode sources = node.child("sources");
    for (const auto& e : node.raw()) {
      const std::string key = e.first.as<std::string>();
      if (key == "sources") continue;
      INFO(name << "." << key);
      CHECK(sources.raw()[key].IsDefined());
    }
  }
}

TEST_CASE("first_principles: the preset's numbers, and a switch without them is refused") {
  DiagnosticList d;
  auto a100 = gpu_of(
      "gpu: {preset: a100-80g, first_principles: {nccl: true, gemm_waves: true, "
      "optimizer_step: true}}\n",
      nullptr, d);
  INFO(first_error(d));
  REQUIRE(a100.has_value());
  CHECK(a100->mechanisms.nccl);
  CHECK_FALSE(a100->mechanisms.sustained_clock);
  CHECK(a100->measured.sms == 108);
  CHECK(a100->measured.nvlink_busbw == doctest::Approx(235e9));
  CHECK(a100->measured.nccl_step_latency_s == doctest::Approx(3.4e-6));
  // The A100 80GB sustained more than the curve's ceiling where it was measured (Perlmutter), so
  // its preset gives no sustained_clock: `true` (every mechanism) is refused, naming the key;
  // the 40GB's is measured below the ceiling.
  DiagnosticList refused;
  CHECK_FALSE(gpu_of("gpu: {preset: a100-80g, first_principles: true}\n", nullptr, refused));
  CHECK(first_error(refused).find("first_principles.sustained_clock") != std::string::npos);
  DiagnosticList d40;
  auto a100_40 = gpu_of("gpu: {preset: a100-40g, first_principles: true}\n", nullptr, d40);
  INFO(first_error(d40));
  REQUIRE(a100_40.has_value());
  CHECK(a100_40->measured.sustained_clock == doctest::Approx(0.976));
  CHECK(a100_40->measured.chip_spread == doctest::Approx(0.0106));
  DiagnosticList none;
  CHECK_FALSE(
      gpu_of("gpu: {flops: 1PFLOPS, first_principles: {gemm_waves: true}}\n", nullptr, none));
  CHECK(first_error(none).find("no preset") != std::string::npos);
  DiagnosticList off;
  auto plain = gpu_of("gpu: {preset: h200, first_principles: false}\n", nullptr, off);
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->mechanisms.any());
}

TEST_CASE("gemm_waves: whole waves of 256x128 tiles over the SMs; sustained_clock slows compute") {
  GpuMeasured a100;
  a100.sms = 108;
  a100.tile_m = 256;
  a100.tile_n = 128;
  // 2048 tokens x 4608 columns (GPT 175B's QKV after t = 8): 288 tiles, 3 waves of 108.
  CHECK(wave_factor(GemmWork{"qkv", 2048, 4608, 12288}, a100) ==
        doctest::Approx(3.0 * 108 * 256 * 128 / (2048.0 * 4608)));
  // The A100 MAMF shape 6912 x 16384 (stas00/ml-engineering): 3456 tiles, exactly 32 waves.
  CHECK(wave_factor(GemmWork{"mamf", 6912, 16384, 2048}, a100) == doctest::Approx(1.0));
  DiagnosticList d;
  auto on = gpu_of(
      "gpu: {preset: h200, first_principles: {sustained_clock: true, gemm_waves: "
      "true}}\n",
      nullptr, d);
  auto off = gpu_of("gpu: {preset: h200}\n", nullptr, d);
  REQUIRE(on.has_value());
  REQUIRE(off.has_value());
  const GemmWork big{"big", 8192, 8192, 8192};  // 32 x 64 tiles = 2048 on 132 SMs: 15.5 waves
  const double t_off = gemm_seconds(big, *off, 2.0) - off->efficiency.gemm_overhead_s;
  const double t_on = gemm_seconds(big, *on, 2.0) - on->efficiency.gemm_overhead_s;
  CHECK(t_on == doctest::Approx(t_off / 0.902 * wave_factor(big, on->measured)));
}

TEST_CASE("Megatron's optimizer step: the passes its code runs for the gradient buffer and dtype") {
  // fp16 with 16-bit gradients (Megatron-LM of 2021): 48 + 3e bytes per parameter.
  const OptimizerBytes fp16 = megatron_optimizer_bytes(2, 2.0, true);
  CHECK(fp16.per_parameter == doctest::Approx(2.0));  // zero the 16-bit buffer
  CHECK(fp16.per_shard == doctest::Approx(52.0));     // copy 6, unscale 8, norm 4, Adam 28, back 6
  // bf16 with fp32 main_grad (today's default): no copy (main_grad.float() is the buffer
  // itself), no grad scaler.
  const OptimizerBytes bf16 = megatron_optimizer_bytes(2, 4.0, false);
  CHECK(bf16.per_parameter == doctest::Approx(4.0));  // zero the fp32 buffer
  CHECK(bf16.per_shard == doctest::Approx(38.0));     // norm 4, Adam 28, copy back 6
}

TEST_CASE("slowest_gpu: compute at the pace of the slowest of n chips spread by the preset's cv") {
  // E[max of n standard normals]: 1/sqrt(pi) for 2; tabulated (Harter 1961) 1.1630 for 5, 2.0697
  // for 32.
  CHECK(expected_max_normal(1) == 0.0);
  CHECK(expected_max_normal(2) == doctest::Approx(1.0 / std::sqrt(std::numbers::pi)).epsilon(1e-6));
  CHECK(expected_max_normal(5) == doctest::Approx(1.1630).epsilon(1e-4));
  CHECK(expected_max_normal(32) == doctest::Approx(2.0697).epsilon(1e-4));
  CHECK(expected_max_normal(3072) > expected_max_normal(1536));
  DiagnosticList d;
  auto on = gpu_of("gpu: {preset: h200, first_principles: {slowest_gpu: true}}\n", nullptr, d);
  INFO(first_error(d));
  REQUIRE(on.has_value());
  CHECK(on->measured.chip_spread == doctest::Approx(0.0126));
  CHECK(slowest_gpu_factor(*on, 32) == doctest::Approx(1.0 + 2.0697 * 0.0126).epsilon(1e-5));
  CHECK(slowest_gpu_factor(*on, 3072) > slowest_gpu_factor(*on, 32));
  auto off = gpu_of("gpu: {preset: h200}\n", nullptr, d);
  REQUIRE(off.has_value());
  CHECK(slowest_gpu_factor(*off, 3072) == 1.0);
  // A GPU without a measured spread: refused, naming the key.
  DiagnosticList refused;
  CHECK_FALSE(
      gpu_of("gpu: {flops: 1PFLOPS, first_principles: {slowest_gpu: true}}\n", nullptr, refused));
  CHECK(first_error(refused).find("first_principles.slowest_gpu") != std::string::npos);
  // A100 80GB: the spread of Perlmutter's chips.
  auto a100 =
      gpu_of("gpu: {preset: a100-80g, first_principles: {slowest_gpu: true}}\n", nullptr, d);
  REQUIRE(a100.has_value());
  CHECK(slowest_gpu_factor(*a100, 32) == doctest::Approx(1.0 + 2.0697 * 0.0076).epsilon(1e-5));
}

TEST_CASE("nccl_tuning reads the preset's compute capability; without one it is refused") {
  DiagnosticList d;
  const std::pair<const char*, int> cases[] = {
      {"a100-80g", 80}, {"h100-sxm", 90}, {"h200", 90}, {"h800", 90}, {"b200", 100}};
  for (auto [preset, cc] : cases) {
    auto on = gpu_of(
        std::string("gpu: {preset: ") + preset + ", first_principles: {nccl_tuning: true}}\n",
        nullptr, d);
    INFO(preset << ": " << first_error(d));
    REQUIRE(on.has_value());
    CHECK(on->mechanisms.nccl_tuning);
    CHECK(on->measured.compute_capability == cc);
  }
  // AMD's MI300X runs RCCL, not NCCL: no compute capability, refused naming the key.
  DiagnosticList refused;
  CHECK_FALSE(
      gpu_of("gpu: {preset: mi300x, first_principles: {nccl_tuning: true}}\n", nullptr, refused));
  CHECK(first_error(refused).find("first_principles.nccl_tuning") != std::string::npos);
}
