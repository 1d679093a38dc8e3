#include "tools/scenario/sections/model_section.h"

#include <fmt/format.h>

#include "tools/scenario/scenario.h"

namespace bubblesim {
namespace {

std::optional<TransformerModel> read_model(const YamlNode& node, DiagnosticList& diags) {
  MapReader m(node, diags,
              {"layers", "hidden", "heads", "seq_len", "micro_batch_size", "vocab", "dtype"});
  if (!node.is_map()) return std::nullopt;
  TransformerModel model;
  bool ok = true;
  auto need = [&](const std::string& key, std::int64_t min, std::int64_t max, std::int64_t& out) {
    std::optional<YamlNode> n = m.require(key);
    std::optional<std::int64_t> v = n ? n->as_integer(diags, min, max) : std::nullopt;
    if (v) out = *v;
    ok = ok && v.has_value();
  };
  auto optional = [&](const std::string& key, std::int64_t min, std::int64_t max,
                      std::int64_t& out) {
    if (!m.has(key)) return;
    std::optional<std::int64_t> v = m.integer(key, min, max);
    if (v) out = *v;
    ok = ok && v.has_value();
  };
  need("layers", 1, 1'000'000, model.layers);
  need("hidden", 1, 1'000'000, model.hidden);
  need("heads", 1, 1'000'000, model.heads);
  need("seq_len", 1, 100'000'000, model.seq_len);
  optional("micro_batch_size", 1, 1'000'000, model.micro_batch_size);
  optional("vocab", 0, 100'000'000, model.vocab);
  if (m.has("dtype")) {
    if (auto d = m.choice("dtype", {"bf16", "fp16", "fp32", "fp8"})) {
      model.dtype = *d;
      model.dtype_bytes = *d == "fp32" ? 4 : *d == "fp8" ? 1 : 2;
    } else {
      ok = false;
    }
  }
  if (ok && model.hidden % model.heads != 0) {
    m.get("heads")->error(diags, fmt::format("hidden size {} is not divisible by {} heads",
                                             model.hidden, model.heads));
    ok = false;
  }
  if (!ok) return std::nullopt;
  return model;
}

std::optional<GpuSpec> read_gpu(const YamlNode& node, DiagnosticList& diags) {
  MapReader g(node, diags, {"flops", "efficiency", "memory", "memory_bandwidth"});
  if (!node.is_map()) return std::nullopt;
  GpuSpec gpu;
  bool ok = true;
  if (auto n = g.require("flops")) {
    if (auto f = n->as_flop_rate(diags))
      gpu.flops = *f;
    else
      ok = false;
  } else {
    ok = false;
  }
  if (auto n = g.get("efficiency")) {
    auto e = n->as_real(diags, 0.0, 1.0);
    if (e && *e <= 0.0) {
      n->error(diags, fmt::format("{} is out of range (allowed: above 0 up to 1)", n->describe()));
      e.reset();
    }
    if (e)
      gpu.efficiency = *e;
    else
      ok = false;
  }
  if (g.has("memory")) {
    if (auto b = g.bytes("memory"))
      gpu.memory = *b;
    else
      ok = false;
  }
  if (g.has("memory_bandwidth")) {
    if (auto b = g.bandwidth("memory_bandwidth"))
      gpu.memory_bandwidth = *b;
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return gpu;
}

}  // namespace

void read_model_section(LoadContext& context, Scenario& sc) {
  if (auto node = context.section("model")) sc.model = read_model(*node, context.diags());
  if (auto node = context.section("cluster")) {
    MapReader cluster(*node, context.diags(), {"gpu"});
    if (auto gpu_node = cluster.require("gpu")) sc.gpu = read_gpu(*gpu_node, context.diags());
  }
}

}  // namespace bubblesim
