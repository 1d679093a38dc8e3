#include "sim/scenario/sections/memory_section.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/per_stage.h"
#include "sim/scenario/sections/pipeline_section.h"

namespace bubblesim {
namespace {

/// An offload policy.
MemoryPolicy policy_of(const std::string& s) {
  return s == "full"        ? MemoryPolicy::Full
         : s == "selective" ? MemoryPolicy::Selective
                            : MemoryPolicy::None;
}

/// `stages: [..]` of a memory pass: table stages, non-negative, no duplicates.
std::optional<std::vector<std::int32_t>> read_stage_list(const YamlNode& n, DiagnosticList& diags) {
  if (!n.is_sequence()) {
    n.error(diags, fmt::format("expected a list of table stages, e.g. [0, 1], got {}",
                               n.is_scalar() ? "'" + n.describe() + "'" : n.describe()));
    return std::nullopt;
  }
  std::vector<std::int32_t> out;
  bool ok = true;
  for (const YamlNode& e : n.elements()) {
    if (auto v = e.as_integer(diags, 0, kMaxStages - 1)) {
      if (std::find(out.begin(), out.end(), *v) != out.end()) {
        e.error(diags, fmt::format("stage {} is listed twice", *v));
        ok = false;
      }
      out.push_back(static_cast<std::int32_t>(*v));
    } else {
      ok = false;
    }
  }
  if (ok && out.empty()) {
    n.error(diags, "expected at least one stage");
    ok = false;
  }
  if (!ok) return std::nullopt;
  std::sort(out.begin(), out.end());
  return out;
}

/// Why `memory.recompute.policy: op` cannot price this model, or "": torchtitan's save list is
/// written for a dense transformer block with fused attention (SDPA, FlashAttention); its
/// per-op decisions are not modelled for MoE layers, MLA, an unfused attention core or a measured
/// layer (costs.per_layer gives no ops).
std::string op_policy_refusal(const Scenario& sc) {
  if (!sc.model) return "it needs 'model:' (the layer's ops and their outputs come from it)";
  if (sc.model->moe) return "model.moe: it is modelled for dense layers only";
  if (sc.model->attention.mla) return "model.mla: it is modelled for multi-head attention only";
  if (sc.model->attention.kind != AttentionKind::Flash)
    return "model.attention is 'standard': the save list keeps a fused attention kernel's output "
           "(SDPA, FlashAttention); use 'flash'";
  if (sc.costs.per_layer) return "costs.per_layer: a measured layer has no ops to choose from";
  return "";
}

/// One of `layers`, `unit_layers`, `every` (full recompute of a transformer): a whole number of
/// layers, and only with a model.
void read_layer_count(const YamlNode& n, const char* key, const Scenario& sc,
                      std::optional<std::int64_t>& out, DiagnosticList& diags) {
  if (!sc.model) {
    n.error(diags, fmt::format("'{}' needs 'model:' (the layers of a stage and their forward come "
                               "from it)",
                               key));
  } else if (auto v = n.as_integer(diags, 1, 1'000'000)) {
    out = *v;
  }
}

// `memory.recompute: {policy: none | full | selective | op, granularity: layer | stage,
// unit_layers | layers | every, stages | fraction}` (memory_settings.h, docs/memory.md). Every key
// that does not apply to the policy (and granularity) is refused, naming what it applies to.
void read_recompute(const YamlNode& node, Scenario& sc, DiagnosticList& diags) {
  MapReader r(node, diags,
              {"policy", "granularity", "stages", "fraction", "layers", "unit_layers", "every"});
  if (!node.is_map()) return;
  sc.memory.recompute_where = node.location();
  auto policy = r.choice("policy", {"none", "full", "selective", "op"});
  if (!policy) {
    if (!r.has("policy")) r.require("policy");
    return;
  }
  RecomputeSettings& rs = sc.memory.recompute;
  rs.policy = *policy == "full"        ? MemoryPolicy::Full
              : *policy == "selective" ? MemoryPolicy::Selective
              : *policy == "op"        ? MemoryPolicy::Op
                                       : MemoryPolicy::None;
  const char* keys[] = {"granularity", "stages", "fraction", "layers", "unit_layers", "every"};
  if (rs.policy != MemoryPolicy::Full) {
    for (const char* key : keys) {
      if (std::optional<YamlNode> n = r.get(key)) {
        n->error(diags,
                 fmt::format(
                     "'{}' is only used with 'policy: full' (policy is '{}'; {})", key, *policy,
                     rs.policy == MemoryPolicy::Selective
                         ? "selective recompute recomputes the attention core of every "
                           "layer"
                     : rs.policy == MemoryPolicy::Op ? "op recompute decides per op in every layer"
                                                     : "nothing is recomputed"));
      }
    }
    if (rs.policy == MemoryPolicy::Op) {
      if (const std::string why = op_policy_refusal(sc); !why.empty()) {
        r.get("policy")->error(
            diags, fmt::format("'policy: op' (torchtitan's per-op selective recompute) cannot be "
                               "priced here: {}",
                               why));
      }
    }
    return;
  }
  if (r.has("granularity")) {
    if (auto g = r.choice("granularity", {"layer", "stage"}))
      rs.granularity = *g == "stage" ? RecomputeGranularity::Stage : RecomputeGranularity::Layer;
  }
  const bool stage = rs.granularity == RecomputeGranularity::Stage;
  std::optional<YamlNode> stages = r.get("stages");
  std::optional<YamlNode> fraction = r.get("fraction");
  for (const auto& [key, n] : {std::pair{"stages", stages}, std::pair{"fraction", fraction}}) {
    if (n && !stage) {
      n->error(diags,
               fmt::format("'{}' is only used with 'granularity: stage' (the R op of chosen table "
                           "stages); recompute per layer applies to every stage as frameworks "
                           "apply it: recompute fewer layers with 'layers' or 'every'",
                           key));
    }
  }
  std::optional<YamlNode> layer_keys[] = {r.get("layers"), r.get("unit_layers"), r.get("every")};
  const char* layer_names[] = {"layers", "unit_layers", "every"};
  std::optional<std::int64_t>* layer_out[] = {&rs.layers, &rs.unit_layers, &rs.every};
  const char* given = nullptr;
  for (std::size_t i = 0; i < 3; ++i) {
    if (!layer_keys[i]) continue;
    if (stage && i > 0) {
      layer_keys[i]->error(diags, fmt::format("'{}' is only used with 'granularity: layer' (the "
                                              "stage's R op recomputes its layers at once)",
                                              layer_names[i]));
      continue;
    }
    if (given) {
      layer_keys[i]->error(diags, fmt::format("give one of 'layers', 'unit_layers' and 'every', "
                                              "not both '{}' and '{}'",
                                              given, layer_names[i]));
      continue;
    }
    given = layer_names[i];
    read_layer_count(*layer_keys[i], layer_names[i], sc, *layer_out[i], diags);
  }
  if (!stage) return;
  if (stages && fraction) {
    fraction->error(diags, "give either 'stages' or 'fraction', not both");
    return;
  }
  if (stages) {
    if (auto list = read_stage_list(*stages, diags)) rs.stages = *list;
  }
  if (fraction) {
    auto f = fraction->as_real(diags, 0.0, 1.0);
    if (f && *f <= 0.0) {
      fraction->error(diags, fmt::format("{} is out of range (allowed: above 0 up to 1)",
                                         fraction->describe()));
    } else if (f) {
      rs.fraction = *f;
    }
  }
}

void read_offload(const YamlNode& node, Scenario& sc, DiagnosticList& diags) {
  MapReader o(node, diags, {"policy", "prefetch", "stages", "min_idle", "bandwidth"});
  if (!node.is_map()) return;
  sc.memory.offload_where = node.location();
  OffloadSettings& os = sc.memory.offload;
  std::optional<YamlNode> policy_node = o.get("policy");
  std::string policy = "none";
  if (policy_node) {
    auto p = policy_node->as_choice(diags, {"none", "full", "selective"});
    if (!p) return;
    policy = *p;
  } else {
    o.require("policy");
    return;
  }
  os.policy = policy_of(policy);
  if (auto n = o.get("prefetch")) {
    if (auto v = n->as_integer(diags, 1, 1'000'000)) os.prefetch = static_cast<std::int32_t>(*v);
  }
  if (auto n = o.get("min_idle")) {
    if (auto t = n->as_time(diags)) os.min_idle = *t;
  }
  if (auto n = o.get("stages")) {
    if (os.policy != MemoryPolicy::Selective) {
      n->error(diags, fmt::format("'stages' is only used with 'policy: selective' (policy is '{}')",
                                  policy));
    } else if (auto list = read_stage_list(*n, diags)) {
      os.stages = *list;
    }
  }
  std::optional<YamlNode> bandwidth = o.get("bandwidth");
  const CommunicationSpec& comm = sc.communication;
  if (bandwidth) {
    if (comm.kind == CommunicationKind::Topology) {
      bandwidth->error(
          diags,
          "'bandwidth' is only used with fixed-delay communication; with a topology the "
          "route from each GPU to its host gives the offload bandwidth");
      return;
    }
    auto b = bandwidth->as_bandwidth(diags);
    if (b && b->bytes_per_second() <= 0.0) {
      bandwidth->error(diags, fmt::format("the offload bandwidth must be positive, got '{}'",
                                          bandwidth->describe()));
      b.reset();
    }
    if (b)
      sc.memory.offload_bandwidth = *b;
    else
      return;
  }
  if (os.policy == MemoryPolicy::None) return;
  // Offloading needs a host to offload to.
  if (comm.kind == CommunicationKind::FixedDelay) {
    if (!bandwidth) {
      policy_node->error(
          diags, fmt::format("cannot offload: fixed-delay communication has no host; give "
                             "'memory.offload.bandwidth' (a private PCIe link per GPU, e.g. "
                             "25GB/s) or use a topology with a host vertex"));
    }
    return;
  }
  if (!comm.topology) return;  // the topology had errors (already reported)
  for (VertexId gpu : comm.placement) {
    if (!comm.topology->nearest_host(gpu)) {
      policy_node->error(
          diags, fmt::format("cannot offload: no host vertex is reachable from GPU '{}' in the "
                             "topology; add a host linked to it (over PCIe) or set "
                             "'policy: none'",
                             comm.topology->vertex_name(gpu)));
      return;
    }
  }
}

/// Without `memory.budget`, the GPU's own memory (`cluster.gpu.memory`) is every device's budget:
/// a scenario that names its GPU is held to what the GPU has.
void default_budget_to_gpu_memory(LoadContext& context, Scenario& sc) {
  if (!sc.memory.budget.empty() || !sc.gpu || !sc.gpu->memory) return;
  sc.memory.budget = {*sc.gpu->memory};
  // Where the GPU's memory was given: its own key, else the preset that holds it.
  const std::optional<YamlNode> cluster = context.section("cluster");
  if (!cluster || !cluster->is_map() || !cluster->raw()["gpu"]) return;
  const YamlNode gpu = cluster->child("gpu");
  for (const char* key : {"memory", "preset"}) {
    if (gpu.is_map() && gpu.raw()[key]) {
      sc.memory.budget_key = std::string("cluster.gpu.") + key;
      sc.memory.budget_where = gpu.child(key).location();
      return;
    }
  }
}

}  // namespace

void read_memory_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("memory");
  if (!node) {
    default_budget_to_gpu_memory(context, sc);
    return;
  }
  DiagnosticList& diags = context.diags();
  MapReader m(*node, diags, {"budget", "host_capacity", "release", "offload", "recompute"});
  if (!node->is_map()) return;
  auto positive_bytes = [&](const YamlNode& n, const char* what) -> std::optional<Bytes> {
    std::optional<Bytes> b = n.as_bytes(diags);
    if (b && *b <= Bytes::zero()) {
      n.error(diags, fmt::format("{} must be positive, got '{}'", what, n.describe()));
      return std::nullopt;
    }
    return b;
  };
  if (std::optional<YamlNode> budget = m.get("budget")) {
    sc.memory.budget_where = budget->location();
    auto read_bytes = [&](const YamlNode& n) { return positive_bytes(n, "a memory budget"); };
    if (budget->is_sequence()) {
      auto v = read_per_stage<Bytes>(m, "budget", sc.stages, diags, read_bytes);
      if (v && sc.stages > 0) sc.memory.budget = v->values;
    } else if (auto b = read_bytes(*budget)) {
      sc.memory.budget = {*b};
    }
  }
  if (auto n = m.get("host_capacity"))
    sc.memory.host_capacity = positive_bytes(*n, "the host capacity");
  if (m.has("release")) {
    if (auto r = m.choice("release", {"split", "backward-complete"})) {
      sc.memory.release =
          *r == "split" ? ReleaseConvention::Split : ReleaseConvention::BackwardComplete;
    }
  }
  if (auto n = m.get("recompute")) read_recompute(*n, sc, diags);
  if (auto n = m.get("offload")) read_offload(*n, sc, diags);
  default_budget_to_gpu_memory(context, sc);
}

}  // namespace bubblesim
