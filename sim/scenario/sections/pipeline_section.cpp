#include "sim/scenario/sections/pipeline_section.h"

#include "sim/scenario/scenario.h"

namespace bubblesim {

void read_labels_section(LoadContext& context, Scenario& sc) {
  DiagnosticList& diags = context.diags();
  if (auto name = context.require_section("name")) {
    if (auto s = name->as_string(diags)) {
      if (s->empty()) name->error(diags, "the name must not be empty");
      sc.labels.name = *s;
    }
  }
  if (auto desc = context.section("description")) {
    if (auto s = desc->as_string(diags)) sc.labels.description = *s;
  }
}

void read_pipeline_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.require_section("pipeline");
  if (!node) return;
  DiagnosticList& diags = context.diags();
  MapReader pipe(*node, diags, {"stages", "microbatches"});
  if (!node->is_map()) return;
  auto stages = pipe.require("stages");
  // With `training.global_batch` the microbatches follow from it (training_section.h).
  auto micro =
      context.section("training") ? pipe.get("microbatches") : pipe.require("microbatches");
  if (stages) {
    if (auto v = stages->as_integer(diags, 1, kMaxStages))
      sc.stages = static_cast<std::int32_t>(*v);
  }
  if (micro) {
    sc.microbatches_where = micro->location();
    if (auto v = micro->as_integer(diags, 1, kMaxMicrobatches))
      sc.microbatches = static_cast<std::int32_t>(*v);
  }
}

}  // namespace bubblesim
