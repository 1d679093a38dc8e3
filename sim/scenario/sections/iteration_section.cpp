#include "sim/scenario/sections/iteration_section.h"

#include "sim/scenario/scenario.h"

namespace bubblesim {

/// More iterations do not change a steady state reached after the second; the bound keeps a
/// mistyped count from replaying a table millions of times.
constexpr std::int64_t kMaxIterations = 1000;

void read_iteration_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("iteration");
  if (!node) return;
  DiagnosticList& diags = context.diags();
  MapReader it(*node, diags, {"count", "barrier"});
  if (!node->is_map()) return;
  if (auto n = it.integer("count", 1, kMaxIterations))
    sc.iteration.count = static_cast<std::int32_t>(*n);
  if (it.has("barrier")) {
    if (auto b = it.choice("barrier", {"global", "none"}))
      sc.iteration.barrier = *b == "none" ? IterationBarrier::None : IterationBarrier::Global;
  }
}

}  // namespace bubblesim
