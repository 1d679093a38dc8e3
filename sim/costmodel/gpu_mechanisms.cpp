#include "sim/costmodel/gpu_mechanisms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace bubblesim {
namespace {

/// A sequence of numbers (`[512, 1024, ...]`); empty with a diagnostic when it is not one.
std::vector<double> numbers(const YamlNode& n, DiagnosticList& diags) {
  std::vector<double> out;
  if (!n.is_sequence()) {
    n.error(diags, fmt::format("expected a list of numbers, got {}", n.describe()));
    return out;
  }
  for (const YamlNode& e : n.elements()) {
    if (auto r = e.as_real(diags, 0.0, 1e9)) out.push_back(*r);
  }
  return out;
}

/// `attention_kernels: {seq_len: [...], NAME: {forward_causal, forward, backward}}`, each part a
/// map from head dimension to TFLOP/s at every sequence length.
void read_attention_tables(const YamlNode& n, std::map<std::string, AttentionRateTable>& out,
                           DiagnosticList& diags) {
  const std::vector<double> seq = numbers(n.child("seq_len"), diags);
  for (const auto& entry : n.raw()) {
    const auto name = entry.first.as<std::string>();
    if (name == "seq_len") continue;
    const YamlNode kernel = n.child(name);
    AttentionRateTable t;
    t.seq_len = seq;
    for (const auto& [part, rows] :
         {std::pair{"forward_causal", &t.forward_causal}, std::pair{"forward", &t.forward},
          std::pair{"backward", &t.backward}}) {
      const YamlNode p = kernel.child(part);
      if (!p.is_map()) {
        kernel.error(diags, fmt::format("attention kernel {} needs {}", name, part));
        continue;
      }
      std::vector<double> dims;
      for (const auto& row : p.raw()) {
        dims.push_back(row.first.as<double>());
        std::vector<double> tflops = numbers(p.child(row.first.as<std::string>()), diags);
        if (tflops.size() != seq.size())
          p.error(diags, fmt::format("each row needs one rate per seq_len ({})", seq.size()));
        for (double& r : tflops) r *= 1e12;
        rows->push_back(std::move(tflops));
      }
      if (t.head_dims.empty()) t.head_dims = dims;
      if (dims != t.head_dims || !std::is_sorted(dims.begin(), dims.end()))
        p.error(diags, "every part needs the same ascending head dimensions");
    }
    out[name] = std::move(t);
  }
}

/// One mechanism: its switch, the preset key its numbers come from, what it needs (for errors).
struct Mechanism {
  const char* key;
  bool FirstPrinciples::*flag;
  const char* preset_key;
  const char* needs;
};

constexpr Mechanism kMechanisms[] = {
    {"nccl", &FirstPrinciples::nccl, "nccl", "a measured NCCL bus bandwidth"},
    {"sustained_clock", &FirstPrinciples::sustained_clock, "sustained_clock",
     "a measured sustained GEMM rate"},
    {"gemm_waves", &FirstPrinciples::gemm_waves, "sms", "the SM count and GEMM tile"},
    {"optimizer_step", &FirstPrinciples::optimizer_step, "memory_bandwidth", "the HBM bandwidth"},
    {"slowest_gpu", &FirstPrinciples::slowest_gpu, "chip_spread",
     "a measured spread of the chips' sustained speed"},
    {"attention_kernels", &FirstPrinciples::attention_kernels, "attention_kernels",
     "a published rate table of the model's attention kernel (model.attention_backend)"},
    {"nccl_tuning", &FirstPrinciples::nccl_tuning, "compute_capability",
     "an NVIDIA compute capability of 7.0 or later (NCCL's tuning tables start at Volta)"},
};

/// "" when the GPU (and the model) give the mechanism's numbers, else why not.
std::string unavailable(const Mechanism& m, const GpuSpec& gpu, const TransformerModel* model) {
  const GpuMeasured& hw = gpu.measured;
  const std::string key = m.key;
  bool has = false;
  if (key == "nccl") has = hw.nvlink_busbw > 0;
  if (key == "sustained_clock") has = hw.sustained_clock > 0;
  if (key == "gemm_waves") has = hw.sms > 0 && hw.tile_m > 0;
  if (key == "optimizer_step") has = gpu.memory_bandwidth.has_value();
  if (key == "slowest_gpu") has = hw.chip_spread > 0;
  if (key == "nccl_tuning") has = hw.compute_capability >= 70;
  if (key == "attention_kernels") {
    const std::string backend = model ? model->kernels.attention_backend : std::string();
    if (backend.empty())
      return "model.attention_backend is not given (a framework preset names the kernel): "
             "attention at the efficiency's flat fractions";
    if (!hw.attention_kernels.contains(backend)) {
      return gpu.preset.empty()
                 ? fmt::format("this GPU has no preset with a published {} table", backend)
                 : fmt::format(
                       "the {} preset has no published {} table "
                       "(scenarios/presets/gpus.yaml): the efficiency's flat fractions",
                       gpu.preset, backend);
    }
    return "";
  }
  if (has) return "";
  if (gpu.preset.empty()) return fmt::format("this GPU has no preset to give {}", m.needs);
  return fmt::format("the {} preset gives no {} (scenarios/presets/gpus.yaml, sources.{})",
                     gpu.preset, m.preset_key, m.preset_key);
}

/// Watts: a number, or one followed by W ("500W").
std::optional<double> watts(const YamlNode& n, DiagnosticList& diags) {
  std::string text = n.is_scalar() ? n.describe() : std::string();
  if (!text.empty() && (text.back() == 'W' || text.back() == 'w')) text.pop_back();
  while (!text.empty() && text.back() == ' ') text.pop_back();
  char* end = nullptr;
  const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || v > 1e5) {
    n.error(diags,
            fmt::format("{} is not a power (allowed: watts above 0, e.g. 500W)", n.describe()));
    return std::nullopt;
  }
  return v;
}

/// `power_caps: {WATTS: fraction, ...}` in ascending order of watts.
std::optional<std::vector<std::pair<double, double>>> caps_of(const YamlNode& n,
                                                              DiagnosticList& diags) {
  if (!n.is_map()) {
    n.error(diags, fmt::format("expected a map of power limits to the share of the sustained "
                               "rate at the TDP they leave (e.g. {{500W: 0.85}}), got {}",
                               n.describe()));
    return std::nullopt;
  }
  std::vector<std::pair<double, double>> out;
  for (const auto& e : n.raw()) {
    const auto key = e.first.as<std::string>();
    const YamlNode value = n.child(key);
    const YamlNode key_node(e.first, value.file(), value.path());
    const std::optional<double> w = watts(key_node, diags);
    const std::optional<double> f = value.as_real(diags, 0.0, 1.0);
    if (!w || !f) return std::nullopt;
    out.emplace_back(*w, *f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool read_power_limit(MapReader& m, GpuSpec& gpu, DiagnosticList& diags) {
  std::optional<YamlNode> caps_node = m.get("power_caps");
  if (caps_node) {
    auto caps = caps_of(*caps_node, diags);
    if (!caps) return false;
    gpu.measured.power_caps = *caps;
  }
  std::optional<YamlNode> n = m.get("power_limit");
  if (!n) {
    if (caps_node) {
      caps_node->error(diags,
                       "power_caps gives the sustained rate under a power limit: it needs "
                       "cluster.gpu.power_limit");
      return false;
    }
    return true;
  }
  const std::optional<double> w = watts(*n, diags);
  if (!w) return false;
  const double tdp = gpu.measured.tdp_w;
  const std::string chip = gpu.preset.empty() ? "this GPU" : "the " + gpu.preset + " preset";
  if (!(tdp > 0)) {
    n->error(diags, fmt::format("power_limit needs the chip's TDP, which {} does not give (a GPU "
                                "preset gives it)",
                                chip));
    return false;
  }
  if (*w > tdp) {
    n->error(diags, fmt::format("power_limit {:g} W is above the chip's {:g} W TDP (allowed: up "
                                "to the TDP)",
                                *w, tdp));
    return false;
  }
  gpu.power_limit_w = *w;
  if (*w == tdp) return true;
  // The measured points and the TDP (the rate the sustained clock describes: 1).
  std::vector<std::pair<double, double>> points = gpu.measured.power_caps;
  points.emplace_back(tdp, 1.0);
  if (gpu.measured.power_caps.empty() || *w < points.front().first) {
    n->error(diags,
             fmt::format("power_limit {:g} W: no published measurement of {}'s sustained speed "
                         "{} (scenarios/presets/gpus.yaml, power_caps); give your own as "
                         "cluster.gpu.power_caps: {{WATTS: share of the TDP's rate}}",
                         *w, chip,
                         gpu.measured.power_caps.empty()
                             ? "below its TDP"
                             : fmt::format("at or below {:g} W", points.front().first)));
    return false;
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (*w > points[i].first) continue;
    const auto& [w0, f0] = points[i - 1];
    const auto& [w1, f1] = points[i];
    gpu.power_factor = w1 > w0 ? f0 + (*w - w0) / (w1 - w0) * (f1 - f0) : f1;
    break;
  }
  return true;
}

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
  if (auto v = preset.child("compute_capability"); v.is_scalar()) {
    if (auto r = v.as_real(diags, 1.0, 20.0))
      hw.compute_capability = static_cast<std::int32_t>(std::lround(*r * 10));
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
  if (auto a = preset.child("attention_kernels"); a.is_map())
    read_attention_tables(a, hw.attention_kernels, diags);
  if (auto t = preset.child("tdp"); t.is_scalar()) {
    if (auto w = watts(t, diags)) hw.tdp_w = *w;
  }
  if (auto c = preset.child("power_caps"); c.is_map()) {
    if (auto caps = caps_of(c, diags)) hw.power_caps = *caps;
  }
}

bool read_first_principles(const std::optional<YamlNode>& node, GpuSpec& gpu,
                           const TransformerModel* model, DiagnosticList& diags) {
  FirstPrinciples& fp = gpu.mechanisms;
  fp = FirstPrinciples{};
  fp.given = node.has_value();
  // What the scenario asks for each mechanism: nullopt = the default (on where its numbers are).
  std::vector<std::optional<bool>> asked(std::size(kMechanisms));
  std::string off_by = "cluster.gpu.first_principles: false";
  if (node && node->is_scalar()) {
    auto b = node->as_boolean(diags);
    if (!b) return false;
    if (!*b) asked.assign(asked.size(), false);
    if (*b && std::ranges::all_of(kMechanisms, [&](const Mechanism& m) {
          return !unavailable(m, gpu, model).empty();
        })) {
      node->error(diags, fmt::format("first_principles: true turns on nothing: {} gives none of "
                                     "the mechanisms' numbers (docs/first-principles.md)",
                                     gpu.preset.empty() ? std::string("this GPU (no preset)")
                                                        : "the " + gpu.preset + " preset"));
      return false;
    }
  } else if (node) {
    std::vector<std::string> keys;
    for (const Mechanism& m : kMechanisms) keys.emplace_back(m.key);
    MapReader r(*node, diags, keys);
    if (!node->is_map()) return false;
    for (std::size_t i = 0; i < std::size(kMechanisms); ++i) {
      if (auto v = r.get(kMechanisms[i].key)) {
        auto b = v->as_boolean(diags);
        if (!b) return false;
        asked[i] = *b;
      }
    }
  }
  for (std::size_t i = 0; i < std::size(kMechanisms); ++i) {
    const Mechanism& m = kMechanisms[i];
    const std::string why = unavailable(m, gpu, model);
    if (asked[i] == true && !why.empty()) {
      node->error(diags, fmt::format("first_principles.{} needs {}, which is missing: {}; turn it "
                                     "off with first_principles: {{{}: false}}",
                                     m.key, m.needs, why, m.key));
      return false;
    }
    const bool on = asked[i].value_or(true) && why.empty();
    fp.*m.flag = on;
    if (on) continue;
    if (!why.empty())
      fp.off.emplace_back(m.key, why);
    else
      fp.off.emplace_back(m.key, node && node->is_map()
                                     ? fmt::format("cluster.gpu.first_principles.{}: false", m.key)
                                     : off_by);
  }
  return true;
}

nlohmann::json first_principles_json(const GpuSpec& g) {
  const FirstPrinciples& fp = g.mechanisms;
  nlohmann::json on = nlohmann::json::object();
  if (fp.nccl) {
    on["nccl"] = {{"nvlink_busbw_bytes_per_s", g.measured.nvlink_busbw},
                  {"base_latency_s", g.measured.nccl_base_latency_s},
                  {"step_latency_s", g.measured.nccl_step_latency_s}};
    if (g.measured.net_efficiency > 0) on["nccl"]["net_efficiency"] = g.measured.net_efficiency;
  }
  if (fp.sustained_clock) on["sustained_clock"] = g.measured.sustained_clock;
  if (fp.gemm_waves)
    on["gemm_waves"] = {{"sms", g.measured.sms}, {"tile", {g.measured.tile_m, g.measured.tile_n}}};
  if (fp.optimizer_step) on["optimizer_step"] = true;
  if (fp.slowest_gpu) on["slowest_gpu"] = {{"chip_spread", g.measured.chip_spread}};
  if (fp.attention_kernels) {
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& [name, t] : g.measured.attention_kernels) tables.push_back(name);
    on["attention_kernels"] = {{"tables", tables}};
  }
  if (fp.nccl_tuning)
    on["nccl_tuning"] = {{"compute_capability", g.measured.compute_capability / 10.0},
                         {"source", "NVIDIA/nccl 2.30.7 src/graph/tuning.cc, search.cc"}};
  nlohmann::json off = nlohmann::json::object();
  for (const auto& [key, why] : fp.off) off[key] = why;
  return {{"source", fp.given ? "cluster.gpu.first_principles" : "the GPU preset's defaults"},
          {"on", on},
          {"off", off}};
}

}  // namespace bubblesim
