#include "sim/costmodel/model_reader.h"

#include <fmt/format.h>

#include <initializer_list>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/moe_reader.h"
#include "sim/costmodel/mtp_work.h"
#include "sim/costmodel/presets.h"

namespace bubblesim {
namespace {

/// A scenario mapping over a preset's: get() returns the scenario's node for a key, else the
/// preset's. Unknown keys of the scenario's mapping are reported when it goes out of scope.
class LayeredMap {
 public:
  LayeredMap(const YamlNode& node, DiagnosticList& diags, std::vector<std::string> keys,
             std::optional<YamlNode> preset)
      : user_(node, diags, std::move(keys)), preset_(std::move(preset)) {}
  MapReader& user() { return user_; }
  std::optional<YamlNode> get(const std::string& key) {
    if (auto n = user_.get(key)) return n;
    if (preset_ && preset_->raw()[key]) return preset_->child(key);
    return std::nullopt;
  }
  bool from_preset(const std::string& key) const { return !user_.has(key) && preset_; }
  std::optional<YamlNode> preset_child(const std::string& key) const {
    if (preset_ && preset_->raw()[key]) return preset_->child(key);
    return std::nullopt;
  }

 private:
  MapReader user_;
  std::optional<YamlNode> preset_;
};

/// The preset named by `preset:` (nullopt when absent; a diagnostic when unknown).
std::optional<YamlNode> preset_of(MapReader& m, bool gpu, DiagnosticList& diags, bool& ok,
                                  std::string& name) {
  std::optional<YamlNode> key = m.get("preset");
  if (!key) return std::nullopt;
  const Presets& presets = Presets::builtin();
  const std::vector<std::string>& names = gpu ? presets.gpu_names() : presets.model_names();
  std::optional<std::string> s = key->as_choice(diags, names);
  if (!s) {
    ok = false;
    return std::nullopt;
  }
  name = *s;
  return gpu ? presets.gpu(*s) : presets.model(*s);
}

/// `layers_per_stage: {first, last}` or `{embedding_as_layer, loss_as_layer}`.
std::optional<LayerSplit::Megatron> read_megatron_split(const YamlNode& n, DiagnosticList& diags) {
  const std::size_t before = diags.size();
  MapReader r(n, diags, {"first", "last", "embedding_as_layer", "loss_as_layer"});
  LayerSplit::Megatron mg;
  mg.first = r.integer("first", 0, 1'000'000);
  mg.last = r.integer("last", 0, 1'000'000);
  if (auto v = r.boolean("embedding_as_layer")) mg.embedding_as_layer = *v;
  if (auto v = r.boolean("loss_as_layer")) mg.loss_as_layer = *v;
  if (diags.size() != before) return std::nullopt;
  const bool counts = mg.first || mg.last;
  const bool accounts = mg.embedding_as_layer || mg.loss_as_layer;
  if (counts == accounts) {
    n.error(diags, counts ? "give first / last layer counts or embedding_as_layer / "
                            "loss_as_layer, not both (Megatron-Core refuses the combination)"
                          : "expected first, last, embedding_as_layer or loss_as_layer (Megatron-"
                            "Core's uneven pipeline split)");
    return std::nullopt;
  }
  return mg;
}

std::optional<std::vector<std::int64_t>> integer_list(const YamlNode& n, DiagnosticList& diags) {
  if (!n.is_sequence()) {
    n.error(
        diags,
        fmt::format("expected a list of layer counts{}, got {}",
                    n.path().find("layers_per_stage") != std::string::npos ? " or 'balanced'" : "",
                    n.is_scalar() ? "'" + n.describe() + "'" : n.describe()));
    return std::nullopt;
  }
  std::vector<std::int64_t> out;
  bool ok = true;
  for (const YamlNode& e : n.elements()) {
    if (auto v = e.as_integer(diags, 0, 1'000'000))
      out.push_back(*v);
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

const std::vector<std::string>& model_keys() {
  static const std::vector<std::string> keys{"preset",
                                             "layers",
                                             "hidden",
                                             "heads",
                                             "kv_heads",
                                             "ffn_hidden",
                                             "seq_len",
                                             "micro_batch_size",
                                             "vocab",
                                             "mlp",
                                             "attention",
                                             "cross_entropy",
                                             "tied_embeddings",
                                             "bias",
                                             "dropout",
                                             "dtype",
                                             "fp8_linear",
                                             "layers_per_stage",
                                             "layers_per_chunk",
                                             "moe",
                                             "mla",
                                             "activation_fusion",
                                             "bias_grad",
                                             "glue_kernels",
                                             "mtp_depth"};
  return keys;
}

std::optional<TransformerModel> read_transformer_model(const YamlNode& node,
                                                       DiagnosticList& diags) {
  std::vector<std::string> keys = model_keys();
  if (!node.is_map()) {
    MapReader complain(node, diags, keys);
    return std::nullopt;
  }
  TransformerModel m;
  bool ok = true;
  std::optional<YamlNode> preset;
  {
    MapReader probe(node, diags, keys);
    preset = preset_of(probe, false, diags, ok, m.preset);
  }
  LayeredMap map(node, diags, keys, preset);
  map.user().get("preset");
  // An unknown preset is the cause of every key it would have given: report it alone.
  const bool preset_unknown = !ok;
  auto integer = [&](const std::string& key, std::int64_t min, std::int64_t max, std::int64_t& out,
                     bool required) {
    std::optional<YamlNode> n = map.get(key);
    if (!n) {
      if (required) {
        if (!preset_unknown) map.user().require(key);
        ok = false;
      }
      return;
    }
    if (auto v = n->as_integer(diags, min, max))
      out = *v;
    else
      ok = false;
  };
  auto boolean = [&](const std::string& key, bool& out) {
    if (std::optional<YamlNode> n = map.get(key)) {
      if (auto v = n->as_boolean(diags))
        out = *v;
      else
        ok = false;
    }
  };
  auto choice = [&](const std::string& key, const std::vector<std::string>& choices) {
    std::optional<std::string> out;
    if (std::optional<YamlNode> n = map.get(key)) {
      out = n->as_choice(diags, choices);
      ok = ok && out.has_value();
    }
    return out;
  };
  integer("layers", 1, 1'000'000, m.layers, true);
  integer("hidden", 1, 1'000'000, m.hidden, true);
  integer("heads", 1, 1'000'000, m.attention.heads, true);
  integer("kv_heads", 1, 1'000'000, m.attention.kv_heads, false);
  integer("ffn_hidden", 1, 100'000'000, m.mlp.ffn_hidden, false);
  integer("seq_len", 1, 100'000'000, m.seq_len, true);
  integer("micro_batch_size", 1, 1'000'000, m.micro_batch_size, false);
  integer("vocab", 0, 100'000'000, m.embedding.vocab, false);
  integer("mtp_depth", 0, 1'000, m.embedding.mtp_depth, false);
  if (auto c = choice("mlp", {"gelu", "swiglu"}))
    m.mlp.kind = *c == "swiglu" ? MlpKind::Swiglu : MlpKind::Gelu;
  if (auto c = choice("attention", {"flash", "standard"}))
    m.attention.kind = *c == "standard" ? AttentionKind::Standard : AttentionKind::Flash;
  if (auto c = choice("cross_entropy", {"fp32", "half", "fused"}))
    m.kernels.cross_entropy = *c == "fused"  ? CrossEntropyKind::Fused
                              : *c == "half" ? CrossEntropyKind::Half
                                             : CrossEntropyKind::Fp32;
  boolean("tied_embeddings", m.embedding.tied);
  m.embedding.tied_given = map.user().has("tied_embeddings");
  m.embedding.where =
      m.embedding.tied_given ? map.user().get("tied_embeddings")->location() : node.location();
  boolean("bias", m.bias);
  boolean("dropout", m.dropout);
  if (auto c = choice("activation_fusion", {"fused", "forward_unfused", "unfused"}))
    m.kernels.activation_fusion = *c == "unfused"           ? ActivationFusion::Unfused
                                  : *c == "forward_unfused" ? ActivationFusion::ForwardUnfused
                                                            : ActivationFusion::Fused;
  if (auto c = choice("bias_grad", {"backward_input", "backward_weight"}))
    m.kernels.bias_grad =
        *c == "backward_weight" ? BiasGradPass::BackwardWeight : BiasGradPass::BackwardInput;
  boolean("glue_kernels", m.kernels.glue_kernels);
  if (auto d = choice("dtype", {"bf16", "fp16", "fp32", "fp8"})) {
    m.dtype.name = *d;
    m.dtype.bytes = *d == "fp32" ? 4 : *d == "fp8" ? 1 : 2;
  }
  boolean("fp8_linear", m.fp8_linear);
  for (const auto& [key, out] : {std::pair{"layers_per_stage", &m.split.per_stage},
                                 std::pair{"layers_per_chunk", &m.split.per_chunk}}) {
    if (std::optional<YamlNode> n = map.get(key)) {
      if (n->is_scalar() && n->describe() == "balanced" &&
          out == &m.split.per_stage) {  // the stages' costs even (stage_layout.h)
        m.split.balanced = true;
        continue;
      }
      if (n->is_map() && out == &m.split.per_stage) {  // Megatron-Core's keys (stage_layout.h)
        if (auto mg = read_megatron_split(*n, diags))
          m.split.megatron = *mg;
        else
          ok = false;
        continue;
      }
      if (auto list = integer_list(*n, diags))
        *out = *list;
      else
        ok = false;
    }
  }
  ok = read_moe(map.user().get("moe"), map.preset_child("moe"), diags, m.moe) && ok;
  ok = read_mla(map.user().get("mla"), map.preset_child("mla"), diags, m.attention.mla) && ok;
  // Where a conflict between keys is reported: the first of them the scenario gives (a preset's
  // line is not where the user can fix it), else the scenario's `preset:`, else `model:`.
  auto user_key = [&](std::initializer_list<const char*> names) -> YamlNode {
    for (const char* key : names)
      if (std::optional<YamlNode> n = map.user().get(key)) return *n;
    if (std::optional<YamlNode> n = map.user().get("preset")) return *n;
    return node;
  };
  // A key that needs the vocabulary (tied_embeddings, mtp_depth) against model.vocab 0: at the
  // key when the scenario gives it, else at the scenario's vocab: 0. `off`: the key's value
  // without a vocabulary.
  auto needs_vocab = [&](const char* key, const std::string& value, const char* off,
                         const std::string& why) {
    if (map.user().has(key)) {
      map.user().get(key)->error(
          diags, fmt::format("{} needs a vocabulary: {}, and model.vocab is 0 (allowed: {} "
                             "without a vocabulary)",
                             value, why, off));
    } else {
      user_key({"vocab"}).error(
          diags, fmt::format("0 drops the vocabulary that the model preset's {}: {} needs ({}): "
                             "set model.{}: {} too, or give a vocabulary",
                             key, value, why, key, off));
    }
    ok = false;
  };
  if (ok && m.embedding.tied && m.embedding.vocab <= 0) {
    needs_vocab("tied_embeddings", "true", "false", "the LM head reuses the word embedding");
  }
  if (ok && m.embedding.mtp_depth > 0 && m.embedding.vocab <= 0) {
    // The MTP modules look their tokens up in the embedding and predict through the LM head.
    needs_vocab("mtp_depth", std::to_string(m.embedding.mtp_depth), "0",
                "the multi-token prediction modules share the embedding and the LM head");
  }
  if (ok) {
    const std::string shape = model_shape_error(m, 1);
    if (!shape.empty()) {
      const YamlNode at =
          shape.find("kv_heads") != std::string::npos    ? user_key({"kv_heads", "heads"})
          : shape.find("moe.") != std::string::npos      ? user_key({"moe"})
          : shape.find("model.mla") != std::string::npos ? user_key({"mla", "attention"})
                                                         : user_key({"heads", "hidden"});
      at.error(diags, shape);
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return m;
}

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
  const std::vector<std::string> keys{
      "preset",           "flops",           "efficiency", "memory", "memory_bandwidth",
      "nvlink_bandwidth", "first_principles"};
  if (!node.is_map()) {
    MapReader complain(node, diags, keys);
    return std::nullopt;
  }
  GpuSpec gpu;
  bool ok = true;
  std::optional<YamlNode> preset;
  {
    MapReader probe(node, diags, keys);
    preset = preset_of(probe, true, diags, ok, gpu.preset);
  }
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
  if (preset && preset->raw()["flops_fp8"]) {
    if (auto r = preset->child("flops_fp8").as_flop_rate(diags)) gpu.flops_fp8 = *r;
  }
  if (model && model->fp8_linear && !(gpu.flops_fp8.flops_per_second() > 0)) {
    node.error(diags,
               "model.fp8_linear needs the GPU's FP8 peak: a GPU preset with flops_fp8 "
               "(h100-sxm, h800, h200, b200, mi300x)");
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
