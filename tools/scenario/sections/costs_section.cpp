#include "tools/scenario/sections/costs_section.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "sim/units/text_file.h"
#include "tools/scenario/cost_profile_csv.h"
#include "tools/scenario/scenario.h"
#include "tools/scenario/sections/per_stage.h"
#include "tools/scenario/transformer_costs.h"

namespace bubblesim {
namespace {

/// The transformer's costs, when `model` and `cluster` are both given and valid.
std::optional<CostProfile> derived_costs(LoadContext& context, const Scenario& sc) {
  std::optional<YamlNode> model_node = context.section("model");
  if (!model_node) return std::nullopt;
  if (!context.section("cluster")) {
    model_node->error(
        context.diags(),
        "a 'model' needs 'cluster: {gpu: {flops: ..., efficiency: ...}}' to derive costs");
    return std::nullopt;
  }
  if (!sc.model || !sc.gpu || sc.stages <= 0) return std::nullopt;
  try {
    return transformer_costs(*sc.model, *sc.gpu, sc.stages);
  } catch (const std::invalid_argument& e) {
    model_node->child("layers").error(context.diags(), e.what());
    return std::nullopt;
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
  std::optional<CostProfile> derived = derived_costs(context, sc);
  if (!costs_node && !have_model) {
    context.root().error(
        diags, "missing required key 'costs' (or give 'model' and 'cluster' to derive the costs)");
    return;
  }
  sc.costs_source = costs_node ? (have_model ? "transformer+explicit" : "explicit") : "transformer";

  std::vector<StageCost> stages(p > 0 ? static_cast<std::size_t>(p) : 0);
  if (derived) stages = derived->stages;
  if (!costs_node) {
    if (p > 0) sc.costs.stages = std::move(stages);
    return;
  }
  MapReader c(
      *costs_node, diags,
      {"forward", "backward_input", "backward_weight", "recompute", "fused_forward_backward",
       "activation_memory", "weight_grad_memory", "stage_input_memory", "p2p_bytes",
       "static_memory", "profile", "gradient_bytes", "optimizer_step"});
  if (!costs_node->is_map()) return;
  // A measured profile is the base; explicit keys beside it override it.
  bool profile_has_recompute = false;
  if (std::optional<MeasuredProfile> measured = read_profile(context, c, p)) {
    for (std::size_t s = 0; s < stages.size(); ++s) stages[s] = measured->stages[s];
    profile_has_recompute = measured->ops.count("recompute") != 0;
    sc.costs_source = "profile";
    sc.measured_cv = measured_cv_of(*measured, p);
  }
  auto read_time = [&](const YamlNode& n) { return n.as_time(diags); };
  auto read_bytes = [&](const YamlNode& n) { return n.as_bytes(diags); };
  auto times = [&](const std::string& key, bool required) {
    if (required && !have_model && !c.has("profile")) c.require(key);
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
  if (auto g = sizes("gradient_bytes")) sc.parallelism.gradient_bytes = g->values;
  if (auto o = times("optimizer_step", false)) sc.parallelism.optimizer_step = o->values;
  if (p <= 0) return;

  for (std::size_t s = 0; s < stages.size(); ++s) {
    StageCost& st = stages[s];
    if (forward) st.forward = forward->values[s];
    if (backward_input) st.backward_input = backward_input->values[s];
    if (backward_weight) st.backward_weight = backward_weight->values[s];
    // R defaults to F: follow an explicit F unless R itself is given.
    if (recompute)
      st.recompute = recompute->values[s];
    else if (forward || (!derived && !profile_has_recompute))
      st.recompute = st.forward;
    if (fused) st.fused = fused->values[s];
    if (activation) st.activation = activation->values[s];
    if (weight_grad) st.weight_grad = weight_grad->values[s];
    if (stage_input) st.stage_input = stage_input->values[s];
    if (p2p) st.p2p = p2p->values[s];
    if (static_memory) st.static_memory = static_memory->values[s];
  }
  // M_W is the part of M_B kept after B, so it cannot exceed it.
  for (std::size_t s = 0; s < stages.size(); ++s) {
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
  sc.costs.stages = std::move(stages);
}

}  // namespace bubblesim
