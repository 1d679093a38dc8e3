#include "sim/scenario/sections/costs_section.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "sim/costmodel/stage_layout.h"
#include "sim/scenario/cost_profile_csv.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/per_stage.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

/// With `model`: checks it has a GPU and that its layers fit the pipeline (the costs themselves
/// are derived by the resolve step, after tensor parallelism and communication are known).
void check_model(LoadContext& context, const Scenario& sc) {
  std::optional<YamlNode> model_node = context.section("model");
  if (!model_node) return;
  if (!context.section("cluster")) {
    model_node->error(
        context.diags(),
        "a 'model' needs 'cluster: {gpu: {flops: ..., efficiency: ...}}' to derive costs");
    return;
  }
  if (!sc.model || sc.stages <= 0) return;
  const std::string layout = layout_error(*sc.model, sc.stages);
  if (!layout.empty()) {
    const char* key =
        layout.rfind("layers_per_chunk", 0) == 0 ? "layers_per_chunk" : "layers_per_stage";
    model_node->child(key).error(context.diags(), layout);
    return;
  }
  if (sc.model->split.balanced) return;  // layout_error checked that the layers fill the stages
  try {
    stage_layers(*sc.model, sc.stages);
  } catch (const std::invalid_argument& e) {
    model_node->child("layers").error(context.diags(), e.what());
  }
}

/// `costs.per_layer: {forward, backward_input, backward_weight, activation_memory,
/// weight_grad_memory}`: one transformer layer, measured.
std::optional<MeasuredLayer> read_per_layer(LoadContext& context, MapReader& c,
                                            const Scenario& sc) {
  std::optional<YamlNode> node = c.get("per_layer");
  if (!node) return std::nullopt;
  DiagnosticList& diags = context.diags();
  MapReader m(
      *node, diags,
      {"forward", "backward_input", "backward_weight", "activation_memory", "weight_grad_memory"});
  if (!node->is_map()) return std::nullopt;
  if (!context.section("model")) {
    node->error(diags,
                "costs.per_layer needs 'model:' (its layers per stage, the embedding and the LM "
                "head are derived from it)");
    return std::nullopt;
  }
  MeasuredLayer layer;
  bool ok = true;
  for (const auto& [key, out] :
       {std::pair{"forward", &layer.forward}, std::pair{"backward_input", &layer.backward_input},
        std::pair{"backward_weight", &layer.backward_weight}}) {
    std::optional<YamlNode> n = std::string(key) == "backward_weight" ? m.get(key) : m.require(key);
    if (!n) {
      ok = ok && std::string(key) == "backward_weight";
      continue;
    }
    if (auto t = n->as_time(diags))
      *out = *t;
    else
      ok = false;
  }
  if (m.has("activation_memory")) {
    layer.activation = m.bytes("activation_memory");
    ok = ok && layer.activation.has_value();
  }
  if (m.has("weight_grad_memory")) {
    layer.weight_grad = m.bytes("weight_grad_memory");
    ok = ok && layer.weight_grad.has_value();
  }
  (void)sc;
  if (!ok) return std::nullopt;
  return layer;
}

/// A stage holds at least its static memory and one microbatch's activations and input: a sum
/// that does not fit in 64 bits is reported at the key that overflows it (not at run time, without
/// a file or key).
void check_memory_fits(const std::vector<StageCost>& stages, const YamlNode& costs,
                       DiagnosticList& diags) {
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageCost& st = stages[s];
    std::int64_t sum = st.static_memory.count();
    for (const auto& [key, part] : {std::pair{"activation_memory", st.activation},
                                    std::pair{"stage_input_memory", st.stage_input}}) {
      if (!__builtin_add_overflow(sum, part.count(), &sum)) continue;
      YamlNode at = costs.child(key);
      if (at.is_null()) at = costs;
      at.error(diags, fmt::format("static_memory ({}) and the memory of one microbatch on stage {} "
                                  "add up past 8 EiB (64-bit bytes)",
                                  st.static_memory, s));
      return;
    }
  }
}

/// `costs.profile`: the measured stages (nullopt when absent or invalid); `has_recompute` says
/// whether the file gave recompute times.
std::optional<MeasuredProfile> read_profile(LoadContext& context, MapReader& c, std::int32_t p) {
  std::optional<YamlNode> profile = c.get("profile");
  if (!profile) return std::nullopt;
  std::optional<std::string> path = profile->as_string(context.diags());
  if (!path || p <= 0) return std::nullopt;
  std::filesystem::path file(*path);
  if (file.is_relative()) file = std::filesystem::path(context.base_dir()) / file;
  const std::string name = file.lexically_normal().string();
  try {
    return read_cost_profile_csv(read_text_file(name), name, p);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) {
      profile->error(context.diags(), fmt::format("in profile {}", d.render()));
    }
    return std::nullopt;
  }
}

/// The profile's cv of F, B and W per stage (docs/variability.md); empty without a cv column.
std::vector<CvByKind> measured_cv_of(const MeasuredProfile& measured, std::int32_t p) {
  if (measured.cv.empty()) return {};
  std::vector<CvByKind> out(static_cast<std::size_t>(p), CvByKind{});
  const std::pair<const char*, JitterKind> ops[] = {{"forward", JitterKind::Forward},
                                                    {"backward_input", JitterKind::Backward},
                                                    {"backward_weight", JitterKind::Weight}};
  for (const auto& [op, kind] : ops) {
    auto it = measured.cv.find(op);
    if (it == measured.cv.end()) continue;
    for (std::size_t s = 0; s < out.size() && s < it->second.size(); ++s)
      out[s][static_cast<std::size_t>(kind)] = it->second[s];
  }
  return out;
}

}  // namespace

void read_costs_section(LoadContext& context, Scenario& sc) {
  DiagnosticList& diags = context.diags();
  const std::int32_t p = sc.stages;
  std::optional<YamlNode> costs_node = context.section("costs");
  const bool have_model = context.section("model").has_value();
  check_model(context, sc);
  if (!costs_node && !have_model) {
    context.root().error(
        diags, "missing required key 'costs' (or give 'model' and 'cluster' to derive the costs)");
    return;
  }
  sc.costs.source = costs_node ? (have_model ? "transformer+explicit" : "explicit") : "transformer";
  std::vector<StageCost> stages(p > 0 ? static_cast<std::size_t>(p) : 0);
  if (!costs_node) {
    if (p > 0) sc.costs.profile.stages = std::move(stages);
    return;
  }
  MapReader c(
      *costs_node, diags,
      {"forward", "backward_input", "backward_weight", "recompute", "fused_forward_backward",
       "activation_memory", "weight_grad_memory", "stage_input_memory", "p2p_bytes",
       "static_memory", "profile", "gradient_bytes", "optimizer_step", "per", "per_layer"});
  if (!costs_node->is_map()) return;
  if (auto per = c.choice("per", {"stage", "gpu"}))
    sc.costs.per = *per == "gpu" ? CostBasis::Gpu : CostBasis::Stage;
  sc.costs.per_layer = read_per_layer(context, c, sc);
  CostFields& given = sc.costs.given;
  // A measured profile is the base; explicit keys beside it override it.
  if (std::optional<MeasuredProfile> measured = read_profile(context, c, p)) {
    for (std::size_t s = 0; s < stages.size(); ++s) stages[s] = measured->stages[s];
    const auto has = [&](const char* op) { return measured->ops.count(op) != 0; };
    given.forward = given.backward_input = true;
    given.backward_weight = has("backward_weight");
    given.recompute = has("recompute");  // else it follows the forward
    given.fused = has("fused_forward_backward");
    given.activation = has("activation");
    given.weight_grad = has("weight_grad");
    given.stage_input = has("stage_input");
    given.p2p = has("p2p");
    given.static_memory = has("static");
    sc.costs.source = "profile";
    sc.costs.measured_cv = measured_cv_of(*measured, p);
  }
  const bool have_base = have_model || c.has("profile") || sc.costs.per_layer.has_value();
  auto read_time = [&](const YamlNode& n) { return n.as_time(diags); };
  auto read_bytes = [&](const YamlNode& n) { return n.as_bytes(diags); };
  auto times = [&](const std::string& key, bool required) {
    if (required && !have_base) c.require(key);
    return read_per_stage<Time>(c, key, p, diags, read_time);
  };
  auto sizes = [&](const std::string& key) {
    return read_per_stage<Bytes>(c, key, p, diags, read_bytes);
  };

  auto forward = times("forward", true);
  auto backward_input = times("backward_input", true);
  auto backward_weight = times("backward_weight", false);
  auto recompute = times("recompute", false);
  auto fused = times("fused_forward_backward", false);
  auto activation = sizes("activation_memory");
  auto weight_grad = sizes("weight_grad_memory");
  auto stage_input = sizes("stage_input_memory");
  auto p2p = sizes("p2p_bytes");
  auto static_memory = sizes("static_memory");
  if (auto g = sizes("gradient_bytes")) sc.parallelism.given.gradient_bytes = g->values;
  if (auto o = times("optimizer_step", false)) sc.parallelism.given.optimizer_step = o->values;
  if (p <= 0) return;

  given.forward = given.forward || forward;
  given.backward_input = given.backward_input || backward_input;
  given.backward_weight = given.backward_weight || backward_weight;
  // R defaults to F: an R not given follows the (given or derived) F.
  given.recompute = given.recompute || recompute;
  given.fused = given.fused || fused;
  given.activation = given.activation || activation;
  given.weight_grad = given.weight_grad || weight_grad;
  given.stage_input = given.stage_input || stage_input;
  given.p2p = given.p2p || p2p;
  given.static_memory = given.static_memory || static_memory;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    StageCost& st = stages[s];
    if (forward) st.forward = forward->values[s];
    if (backward_input) st.backward_input = backward_input->values[s];
    if (backward_weight) st.backward_weight = backward_weight->values[s];
    if (recompute)
      st.recompute = recompute->values[s];
    else if (forward || !have_base)
      st.recompute = st.forward;
    if (fused) st.fused = fused->values[s];
    if (activation) st.activation = activation->values[s];
    if (weight_grad) st.weight_grad = weight_grad->values[s];
    if (stage_input) st.stage_input = stage_input->values[s];
    if (p2p) st.p2p = p2p->values[s];
    if (static_memory) st.static_memory = static_memory->values[s];
  }
  // M_W is the part of M_B kept after B, so it cannot exceed it (checked where both are given;
  // derived values are checked by the resolve step).
  const bool final_values = !have_model;  // without a model nothing else fills them
  for (std::size_t s = 0;
       s < stages.size() && (final_values || (given.activation && given.weight_grad)); ++s) {
    if (stages[s].weight_grad > stages[s].activation) {
      YamlNode at = weight_grad ? weight_grad->node : costs_node->child("activation_memory");
      if (weight_grad && at.is_sequence()) at = at.elements()[s];
      bool listed = (weight_grad && weight_grad->node.is_sequence()) ||
                    (activation && activation->node.is_sequence());
      std::string where = listed ? fmt::format(" on stage {}", s) : "";
      at.error(diags,
               fmt::format("weight_grad_memory ({}) must not exceed activation_memory ({}){}",
                           stages[s].weight_grad, stages[s].activation, where));
      break;
    }
  }
  check_memory_fits(stages, *costs_node, diags);
  sc.costs.profile.stages = std::move(stages);
  // Op times beside a model: the report says TFLOP/s and MFU count the model's FLOPs over them,
  // and the runner refuses them where they beat the GPU's peak (sim/runner/op_time_floor.h).
  if (have_model) {
    for (const char* key : {"per_layer", "profile", "forward", "backward_input", "backward_weight",
                            "fused_forward_backward"}) {
      if (!c.has(key)) continue;
      sc.costs.times_key = std::string("costs.") + key;
      sc.costs.times_where = costs_node->child(key).location();
      break;
    }
  }
}

}  // namespace bubblesim
