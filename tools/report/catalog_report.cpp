#include "tools/report/catalog_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/report/text_table.h"

namespace bubblesim {

std::string schedule_list_text(const Registry& registry, std::size_t width) {
  TextTable t({"schedule", "placement", "origin", "description"});
  for (std::size_t c = 1; c < 4; ++c) t.align_left(c);
  for (const std::string& name : registry.names()) {
    const Generator* g = registry.find(name);
    t.add_row({name, g->info.placement, registry.origin(name), g->info.description});
  }
  return t.render(width);
}

std::string schedule_description_text(const Registry& registry, const std::string& name) {
  const Generator* g = registry.find(name);
  std::string out =
      fmt::format("{}: {}\n  placement: {}\n  source: {}\n  origin: {}\n", g->info.name,
                  g->info.description, g->info.placement, g->info.source, registry.origin(name));
  if (g->info.params.empty()) {
    out += "  parameters: none\n";
    return out;
  }
  out += "  parameters:\n";
  for (const ParamSpec& p : g->info.params) {
    out += fmt::format("    {} ({}, default {}): {}\n", p.name, param_type_name(p.type),
                       p.optional_default ? std::string("derived") : to_string(p.default_value),
                       p.help);
    if (!p.choices.empty()) out += fmt::format("      one of: {}\n", fmt::join(p.choices, ", "));
  }
  return out;
}

}  // namespace bubblesim
