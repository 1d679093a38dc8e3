#include "sim/costmodel/moe_reader.h"

#include <fmt/format.h>

#include <string>
#include <tuple>
#include <vector>

namespace bubblesim {
namespace {

/// A scenario mapping over a preset's: get() returns the scenario's node for a key, else the
/// preset's; the scenario's unknown keys are reported.
class Layered {
 public:
  Layered(const std::optional<YamlNode>& user, const std::optional<YamlNode>& preset,
          DiagnosticList& diags, std::vector<std::string> keys)
      : user_(user), preset_(preset), keys_(std::move(keys)) {
    if (user_ && user_->is_map()) reader_.emplace(*user_, diags, keys_);
  }
  /// The node of `key`: the scenario's, else the preset's.
  std::optional<YamlNode> get(const std::string& key) {
    if (reader_) {
      if (auto n = reader_->get(key)) return n;
    }
    if (preset_ && preset_->is_map() && preset_->raw()[key]) return preset_->child(key);
    return std::nullopt;
  }

 private:
  std::optional<YamlNode> user_, preset_;
  std::vector<std::string> keys_;
  std::optional<MapReader> reader_;
};

/// nullopt: absent or `none` (out stays empty); false: wrong; true: a mapping to read.
std::optional<bool> present(const std::optional<YamlNode>& user,
                            const std::optional<YamlNode>& preset, DiagnosticList& diags,
                            const char* what) {
  if (user && user->is_scalar() && user->raw().as<std::string>() == "none") return std::nullopt;
  if (user && !user->is_map()) {
    user->error(diags, fmt::format("expected a mapping of {} keys or 'none', got {}", what,
                                   user->describe()));
    return false;
  }
  if (!user && !preset) return std::nullopt;
  return true;
}

}  // namespace

bool read_moe(const std::optional<YamlNode>& user, const std::optional<YamlNode>& preset,
              DiagnosticList& diags, std::optional<MoeSpec>& out) {
  const std::optional<bool> p = present(user, preset, diags, "model.moe");
  if (!p) return true;
  if (!*p) return false;
  Layered map(user, preset, diags,
              {"experts", "top_k", "expert_ffn_hidden", "shared_experts", "dense_layers",
               "capacity_factor", "imbalance", "max_nodes", "permute"});
  MoeSpec m;
  bool ok = true;
  auto integer = [&](const char* key, std::int64_t min, std::int64_t& v) {
    if (auto n = map.get(key)) {
      if (auto i = n->as_integer(diags, min, 1'000'000))
        v = *i;
      else
        ok = false;
    }
  };
  auto real = [&](const char* key, double min, double max, double& v) {
    if (auto n = map.get(key)) {
      if (auto r = n->as_real(diags, min, max))
        v = *r;
      else
        ok = false;
    }
  };
  integer("experts", 1, m.experts);
  if (m.experts == 0) {
    (user ? *user : *preset).error(diags, "model.moe needs 'experts' (the routed experts)");
    return false;
  }
  integer("top_k", 1, m.top_k);
  integer("expert_ffn_hidden", 1, m.expert_ffn_hidden);
  integer("shared_experts", 0, m.shared_experts);
  integer("dense_layers", 0, m.dense_layers);
  real("capacity_factor", 0.0, 1000.0, m.capacity_factor);
  real("imbalance", 1.0, 1000.0, m.imbalance);
  if (auto n = map.get("imbalance")) m.imbalance_where = n->location();
  integer("max_nodes", 0, m.max_nodes);  // 0: no limit (lifts a preset's)
  if (auto n = map.get("permute")) {
    if (auto c = n->as_choice(diags, {"copies", "fused"}))
      m.permute_copies = *c == "copies";
    else
      ok = false;
  }
  if (ok) out = m;
  return ok;
}

bool read_mla(const std::optional<YamlNode>& user, const std::optional<YamlNode>& preset,
              DiagnosticList& diags, std::optional<MlaSpec>& out) {
  const std::optional<bool> p = present(user, preset, diags, "model.mla");
  if (!p) return true;
  if (!*p) return false;
  Layered map(
      user, preset, diags,
      {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaSpec m;
  bool ok = true;
  for (const auto& [key, v, min] : {std::tuple{"q_lora_rank", &m.q_lora_rank, 0},
                                    std::tuple{"kv_lora_rank", &m.kv_lora_rank, 1},
                                    std::tuple{"qk_nope_head_dim", &m.qk_nope_head_dim, 1},
                                    std::tuple{"qk_rope_head_dim", &m.qk_rope_head_dim, 0},
                                    std::tuple{"v_head_dim", &m.v_head_dim, 1}}) {
    std::optional<YamlNode> n = map.get(key);
    if (!n) {
      if (min == 0) continue;
      (user ? *user : *preset).error(diags, fmt::format("model.mla needs '{}'", key));
      ok = false;
      continue;
    }
    if (auto i = n->as_integer(diags, min, 1'000'000))
      *v = *i;
    else
      ok = false;
  }
  if (ok) out = m;
  return ok;
}

nlohmann::json moe_json(const MoeSpec& m) {
  return {{"experts", m.experts},
          {"top_k", m.top_k},
          {"expert_ffn_hidden", m.expert_ffn_hidden},
          {"shared_experts", m.shared_experts},
          {"dense_layers", m.dense_layers},
          {"capacity_factor", m.capacity_factor},
          {"imbalance", m.imbalance},
          {"max_nodes", m.max_nodes},
          {"permute", m.permute_copies ? "copies" : "fused"}};
}

nlohmann::json mla_json(const MlaSpec& m) {
  return {{"q_lora_rank", m.q_lora_rank},
          {"kv_lora_rank", m.kv_lora_rank},
          {"qk_nope_head_dim", m.qk_nope_head_dim},
          {"qk_rope_head_dim", m.qk_rope_head_dim},
          {"v_head_dim", m.v_head_dim}};
}

}  // namespace bubblesim
