#include "sim/costmodel/model_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/moe_reader.h"
#include "sim/costmodel/mtp_work.h"
#include "sim/costmodel/presets.h"

namespace bubblesim {
namespace {

/// The kernel keys a framework preset gives (scenarios/presets/frameworks.yaml).
const std::vector<std::string>& framework_kernel_keys() {
  static const std::vector<std::string> keys{"attention", "activation_fusion", "cross_entropy",
                                             "bias_grad", "glue_kernels"};
  return keys;
}

/// A scenario mapping over a framework preset's kernel keys over a model preset's: get() returns
/// the scenario's node for a key, else the framework's, else the model preset's. Unknown keys of
/// the scenario's mapping are reported when it goes out of scope.
class LayeredMap {
 public:
  LayeredMap(const YamlNode& node, DiagnosticList& diags, std::vector<std::string> keys,
             std::optional<YamlNode> preset, std::optional<YamlNode> framework)
      : user_(node, diags, std::move(keys)),
        preset_(std::move(preset)),
        framework_(std::move(framework)) {}
  MapReader& user() { return user_; }
  std::optional<YamlNode> get(const std::string& key) {
    if (auto n = user_.get(key)) return n;
    if (framework_ && framework_->raw()[key] &&
        std::ranges::find(framework_kernel_keys(), key) != framework_kernel_keys().end())
      return framework_->child(key);
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
  std::optional<YamlNode> framework_;  // read for its kernel keys only (framework_kernel_keys)
};

/// `model.framework`: a framework preset's name, or `{preset: NAME, host_launch: DURATION}`.
/// Sets `kernels.framework` and `kernels.host_launch_s`; returns the preset's mapping (nullopt
/// without a framework or on an error, `ok` false on an error).
std::optional<YamlNode> read_framework(const std::optional<YamlNode>& n, KernelOptions& k,
                                       DiagnosticList& diags, bool& ok) {
  if (!n) return std::nullopt;
  std::optional<YamlNode> name_node = n;
  std::optional<Time> launch;
  if (n->is_map()) {
    MapReader r(*n, diags, {"preset", "host_launch"});
    name_node = r.get("preset");
    if (!name_node) r.require("preset");
    if (auto t = r.get("host_launch")) {
      // An eager launch costs microseconds; a second per kernel is already far past any host,
      // and bounding it here keeps launches x host_launch inside the simulated time.
      launch = t->as_time(diags, Time::zero(), Time::from_seconds(1.0));
      if (!launch) ok = false;
    }
  }
  if (!name_node) {
    ok = false;
    return std::nullopt;
  }
  std::optional<YamlNode> preset =
      named_preset(*name_node, PresetKind::Framework, diags, ok, k.framework);
  if (!preset) return std::nullopt;
  if (!launch) {
    DiagnosticList internal;  // the built-in file's values parse (presets_test checks them)
    launch = preset->child("host_launch").as_time(internal);
  }
  k.host_launch_s = launch ? launch->seconds() : 0.0;
  return preset;
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
                                             "framework",
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
  std::optional<YamlNode> preset = preset_of(node, keys, PresetKind::Model, diags, ok, m.preset);
  // An unknown preset is the cause of every key it would have given: report it alone.
  const bool preset_unknown = !ok;
  std::optional<YamlNode> framework;
  {
    MapReader probe(node, diags, keys);
    framework = read_framework(probe.get("framework"), m.kernels, diags, ok);
  }
  LayeredMap map(node, diags, keys, preset, framework);
  map.user().get("preset");
  map.user().get("framework");
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

}  // namespace bubblesim
