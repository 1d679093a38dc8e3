// Reading `cluster.gpu:` of a scenario, GPU presets and first-principles mechanisms included
// (docs/models.md, docs/first-principles.md). Declared in model_reader.h beside the `model:`
// reader, which gives the GPU reader the model's dtype.
#include <fmt/format.h>

#include "sim/costmodel/model_reader.h"
#include "sim/costmodel/presets.h"

namespace bubblesim {

namespace {

bool read_efficiency(const YamlNode& n, EfficiencyModel& e, DiagnosticList& diags) {
  auto fraction = [&](const YamlNode& v, double& out) {
    auto r = v.as_real(diags, 0.0, 1.0);
    if (r && *r <= 0.0) {
      v.error(diags, fmt::format("{} is out of range (allowed: above 0 up to 1)", v.describe()));
      r.reset();
    }
    if (r) out = *r;
    return r.has_value();
  };
  if (n.is_scalar()) {
    e.kind = EfficiencyModel::Kind::Constant;
    return fraction(n, e.constant);
  }
  MapReader m(n, diags, {"gemm_max", "gemm_max_fp8", "gemm_overhead", "attention", "memory"});
  if (!n.is_map()) return false;
  e.kind = EfficiencyModel::Kind::Roofline;
  bool ok = true;
  if (auto v = m.get("gemm_max")) ok = fraction(*v, e.gemm_max) && ok;
  if (auto v = m.get("gemm_max_fp8")) ok = fraction(*v, e.gemm_max_fp8) && ok;
  if (m.has("gemm_overhead")) {
    if (auto t = m.time("gemm_overhead"))
      e.gemm_overhead_s = t->seconds();
    else
      ok = false;
  }
  if (auto v = m.get("memory")) ok = fraction(*v, e.memory) && ok;
  if (auto a = m.get("attention")) {
    MapReader am(*a, diags, {"forward", "backward"});
    if (!a->is_map()) return false;
    if (auto v = am.get("forward")) ok = fraction(*v, e.attention_forward) && ok;
    if (auto v = am.get("backward")) ok = fraction(*v, e.attention_backward) && ok;
  }
  return ok;
}

/// The preset's numbers for the first-principles mechanisms (gpus.yaml: sustained_clock, sms,
/// gemm_tile, nccl).
void read_measured(const YamlNode& preset, GpuMeasured& hw, DiagnosticList& diags) {
  if (auto v = preset.child("sustained_clock"); v.is_scalar()) {
    if (auto r = v.as_real(diags, 0.0, 1.0)) hw.sustained_clock = *r;
  }
  if (auto v = preset.child("chip_spread"); v.is_scalar()) {
    if (auto r = v.as_real(diags, 0.0, 1.0)) hw.chip_spread = *r;
  }
  if (auto v = preset.child("sms"); v.is_scalar()) {
    if (auto r = v.as_real(diags, 1.0, 1e6)) hw.sms = static_cast<std::int64_t>(*r);
  }
  if (auto t = preset.child("gemm_tile"); t.is_map()) {
    if (auto r = t.child("m").as_real(diags, 1.0, 1e6)) hw.tile_m = static_cast<std::int64_t>(*r);
    if (auto r = t.child("n").as_real(diags, 1.0, 1e6)) hw.tile_n = static_cast<std::int64_t>(*r);
  }
  if (auto n = preset.child("nccl"); n.is_map()) {
    if (auto b = n.child("nvlink_busbw").as_bandwidth(diags))
      hw.nvlink_busbw = b->bytes_per_second();
    if (n.child("nvls_busbw").is_scalar()) {
      if (auto b = n.child("nvls_busbw").as_bandwidth(diags)) hw.nvls_busbw = b->bytes_per_second();
    }
    if (auto t = n.child("base_latency").as_time(diags)) hw.nccl_base_latency_s = t->seconds();
    if (auto t = n.child("step_latency").as_time(diags)) hw.nccl_step_latency_s = t->seconds();
    if (n.child("net_efficiency").is_scalar()) {
      if (auto r = n.child("net_efficiency").as_real(diags, 0.0, 1.0)) hw.net_efficiency = *r;
    }
  }
}

/// `cluster.gpu.first_principles`: true / false (every mechanism) or a map of switches; a switch
/// whose numbers the GPU's preset does not give is refused.
bool read_first_principles(const YamlNode& n, const GpuSpec& gpu, FirstPrinciples& fp,
                           DiagnosticList& diags) {
  if (n.is_scalar()) {
    auto b = n.as_boolean(diags);
    if (!b) return false;
    fp = FirstPrinciples{*b, *b, *b, *b, *b};
  } else {
    MapReader m(n, diags,
                {"nccl", "sustained_clock", "gemm_waves", "optimizer_step", "slowest_gpu"});
    if (!n.is_map()) return false;
    auto flag = [&](const char* key, bool& out) {
      if (auto v = m.get(key)) {
        auto b = v->as_boolean(diags);
        if (!b) return false;
        out = *b;
      }
      return true;
    };
    if (!flag("nccl", fp.nccl) || !flag("sustained_clock", fp.sustained_clock) ||
        !flag("gemm_waves", fp.gemm_waves) || !flag("optimizer_step", fp.optimizer_step) ||
        !flag("slowest_gpu", fp.slowest_gpu))
      return false;
  }
  const GpuMeasured& hw = gpu.measured;
  const std::string of = gpu.preset.empty() ? std::string("this GPU (no preset)")
                                            : fmt::format("the {} preset", gpu.preset);
  auto missing = [&](const char* key, const char* what) {
    n.error(diags, fmt::format("first_principles.{} needs {}, which {} does not give "
                               "(scenarios/presets/gpus.yaml); turn it off with "
                               "first_principles: {{{}: false}}",
                               key, what, of, key));
    return false;
  };
  if (fp.nccl && !(hw.nvlink_busbw > 0)) return missing("nccl", "a measured NCCL bus bandwidth");
  if (fp.sustained_clock && !(hw.sustained_clock > 0))
    return missing("sustained_clock", "a measured sustained GEMM rate");
  if (fp.gemm_waves && (hw.sms <= 0 || hw.tile_m <= 0))
    return missing("gemm_waves", "the SM count and GEMM tile");
  if (fp.optimizer_step && !gpu.memory_bandwidth)
    return missing("optimizer_step", "the HBM bandwidth");
  if (fp.slowest_gpu && !(hw.chip_spread > 0))
    return missing("slowest_gpu", "a measured spread of the chips' sustained speed");
  return true;
}

}  // namespace

std::optional<GpuSpec> read_gpu_spec(const YamlNode& node, const TransformerModel* model,
                                     DiagnosticList& diags) {
  const std::vector<std::string> keys{"preset",           "flops",           "flops_fp8",
                                      "efficiency",       "memory",          "memory_bandwidth",
                                      "nvlink_bandwidth", "first_principles"};
  if (!node.is_map()) {
    MapReader complain(node, diags, keys);
    return std::nullopt;
  }
  GpuSpec gpu;
  bool ok = true;
  std::optional<YamlNode> preset = preset_of(node, keys, PresetKind::Gpu, diags, ok, gpu.preset);
  MapReader m(node, diags, keys);
  m.get("preset");
  const std::string dtype = model ? model->dtype.name : "bf16";
  if (auto f = m.get("flops")) {
    if (auto r = f->as_flop_rate(diags))
      gpu.flops = *r;
    else
      ok = false;
  } else if (preset && preset->raw()["flops_" + dtype]) {
    if (auto r = preset->child("flops_" + dtype).as_flop_rate(diags)) gpu.flops = *r;
  } else if (preset) {
    node.error(diags, fmt::format("the {} preset has no {} peak; give cluster.gpu.flops",
                                  gpu.preset, dtype));
    ok = false;
  } else {
    if (ok) m.require("flops");  // an unknown preset (reported) is why it is missing
    ok = false;
  }
  // The FP8 peak follows the dense one: `flops_fp8` as given; else the preset's, scaled as
  // `flops` overrides the preset's peak in the model's dtype (a GPU run at a lower clock or
  // power cap loses both alike), so no override leaves one precision at the datasheet rate.
  if (auto f = m.get("flops_fp8")) {
    if (auto r = f->as_flop_rate(diags))
      gpu.flops_fp8 = *r;
    else
      ok = false;
  } else if (dtype == "fp8") {
    gpu.flops_fp8 = gpu.flops;
  } else if (preset && preset->raw()["flops_fp8"]) {
    DiagnosticList internal;  // the built-in file's values parse (presets_test checks them)
    double fp8 = 0, reference = 0;
    if (auto r = preset->child("flops_fp8").as_flop_rate(internal)) fp8 = r->flops_per_second();
    if (preset->raw()["flops_" + dtype]) {
      if (auto r = preset->child("flops_" + dtype).as_flop_rate(internal))
        reference = r->flops_per_second();
    }
    if (m.has("flops") && reference > 0) fp8 *= gpu.flops.flops_per_second() / reference;
    gpu.flops_fp8 = FlopRate::flops_per_second(fp8);
  }
  if (model && model->fp8_linear && !(gpu.flops_fp8.flops_per_second() > 0)) {
    node.error(diags,
               "model.fp8_linear needs the GPU's FP8 peak: cluster.gpu.flops_fp8, or a GPU preset "
               "with one (h100-sxm, h800, h200, b200, mi300x)");
    ok = false;
  }
  auto bytes_key = [&](const char* key, std::optional<Bytes>& out) {
    if (auto n = m.get(key)) {
      out = n->as_bytes(diags);
      ok = ok && out.has_value();
    } else if (preset && preset->raw()[key]) {
      out = preset->child(key).as_bytes(diags);
    }
  };
  auto bandwidth_key = [&](const char* key, std::optional<Bandwidth>& out, bool user_key) {
    if (auto n = user_key ? m.get(key) : std::nullopt) {
      out = n->as_bandwidth(diags);
      ok = ok && out.has_value();
    } else if (preset && preset->raw()[key]) {
      out = preset->child(key).as_bandwidth(diags);
    }
  };
  bytes_key("memory", gpu.memory);
  bandwidth_key("memory_bandwidth", gpu.memory_bandwidth, true);
  bandwidth_key("nvlink_bandwidth", gpu.nvlink_bandwidth, true);  // the tied-embedding sync
  if (preset && preset->raw()["efficiency"]) {
    ok = read_efficiency(preset->child("efficiency"), gpu.efficiency, diags) && ok;
    gpu.efficiency.source = fmt::format("preset {} (scenarios/presets/gpus.yaml)", gpu.preset);
  }
  if (auto n = m.get("efficiency")) {
    ok = read_efficiency(*n, gpu.efficiency, diags) && ok;
    gpu.efficiency.explicit_given = true;
    gpu.efficiency.source = "cluster.gpu.efficiency";
    if (ok && gpu.efficiency.kind == EfficiencyModel::Kind::Roofline && !gpu.memory_bandwidth) {
      n->error(diags,
               "the roofline efficiency model needs the GPU's memory bandwidth: give "
               "cluster.gpu.memory_bandwidth or a GPU preset");
      ok = false;
    }
  }
  if (preset) read_measured(*preset, gpu.measured, diags);
  if (auto n = m.get("first_principles"))
    ok = read_first_principles(*n, gpu, gpu.mechanisms, diags) && ok;
  if (!ok) return std::nullopt;
  return gpu;
}

}  // namespace bubblesim
