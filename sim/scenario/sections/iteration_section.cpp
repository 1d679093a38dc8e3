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
  MapReader it(*node, diags, {"count", "barrier", "checkpoint"});
  if (!node->is_map()) return;
  if (auto n = it.integer("count", 1, kMaxIterations))
    sc.iteration.count = static_cast<std::int32_t>(*n);
  if (it.has("barrier")) {
    if (auto b = it.choice("barrier", {"global", "none"}))
      sc.iteration.barrier = *b == "none" ? IterationBarrier::None : IterationBarrier::Global;
  }
  if (std::optional<YamlNode> c = it.get("checkpoint")) {
    // The state a checkpoint writes is the model's (its parameters and Adam's state).
    MapReader ck(*c, diags, {"interval", "write_bandwidth"});
    if (!c->is_map()) return;
    std::optional<std::int64_t> interval = ck.integer("interval", 1, 100'000'000);
    std::optional<Bandwidth> bandwidth = ck.bandwidth("write_bandwidth");
    if (!ck.has("interval")) ck.require("interval");
    if (!ck.has("write_bandwidth")) ck.require("write_bandwidth");
    if (!interval || !bandwidth) return;
    if (!sc.model) {
      c->error(diags,
               "a checkpoint writes the model's parameters and optimizer state: it needs "
               "'model:'");
      return;
    }
    sc.iteration.checkpoint = {static_cast<std::int32_t>(*interval), *bandwidth};
  }
}

}  // namespace bubblesim
