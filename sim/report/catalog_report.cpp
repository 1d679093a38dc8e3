#include "sim/report/catalog_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sim/report/metric_table.h"
#include "sim/report/sweep_plot.h"
#include "sim/report/text_table.h"

namespace bubblesim {
namespace {

/// `text` in at most `width` characters: whole when it fits, else cut after the last clause
/// (", ", "; ", ": ", " (") or word that fits, with "..." after it.
std::string one_line(const std::string& text, std::size_t width) {
  if (width == 0 || text.size() <= width) return text;
  const std::string more = "...";
  if (width <= more.size()) return text.substr(0, width);
  const std::size_t room = width - more.size();
  std::size_t cut = std::string::npos;
  for (const char* boundary : {", ", "; ", ": ", " ("}) {
    const std::size_t at = text.rfind(boundary, room);
    if (at != std::string::npos && at > 0 && (cut == std::string::npos || at > cut)) cut = at;
  }
  if (cut == std::string::npos || cut < room / 2) cut = text.rfind(' ', room);
  if (cut == std::string::npos || cut == 0) cut = room;
  return text.substr(0, cut) + more;
}

}  // namespace

std::string schedule_list_text(const Registry& registry, std::size_t width) {
  const std::vector<std::string> names = registry.names();
  std::size_t name_width = 8, placement_width = 9;  // at least the headings
  std::string plugins;  // "NAME: plugin PATH (version X)" lines, whole: a path does not wrap
  for (const std::string& name : names) {
    name_width = std::max(name_width, name.size());
    placement_width = std::max(placement_width, registry.find(name)->info.placement.size());
    if (registry.origin(name) != "built-in")
      plugins += fmt::format("  {}: {}\n", name, registry.origin(name));
  }
  // The summary gets what the other two columns and the gaps between them leave.
  const std::size_t used = name_width + placement_width + 4;
  const std::size_t room =
      width == 0 ? 0 : std::max<std::size_t>(20, width - std::min(width, used));
  TextTable t({"schedule", "placement", "summary"});
  for (std::size_t c = 1; c < 3; ++c) t.align_left(c);
  for (const std::string& name : names) {
    const Generator* g = registry.find(name);
    t.add_row({name, g->info.placement, one_line(g->info.description, room)});
  }
  std::string out = t.render(width);
  if (!plugins.empty()) out += "from plugins (the others are built-in):\n" + plugins;
  return out +
         wrap_text("`bubblesim explain NAME`: a schedule's full description and parameters", width);
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

std::string metric_list_text(std::size_t width) {
  // One metric a paragraph: its name and facts on a line, what it measures wrapped under it (a
  // five-column table leaves the help a sliver of a 100-column terminal).
  const std::vector<std::string> plottable = sweep_plot_metrics();
  std::string out;
  for (const Metric& m : metric_table()) {
    const bool plot =
        std::find(plottable.begin(), plottable.end(), m.csv_column()) != plottable.end();
    const std::string_view better =
        m.direction == MetricDirection::LowerIsBetter    ? ", lower is better"
        : m.direction == MetricDirection::HigherIsBetter ? ", higher is better"
                                                         : "";
    out += wrap_text(m.name() + " (" + std::string(metric_unit_name(m.unit)) + std::string(better) +
                         (plot ? "; plot: " + m.csv_column() : "") + ")",
                     width, 4);
    out += wrap_text("    " + std::string(m.help), width, 4);
  }
  return out + "plot: the CSV column `sweep --html --plot-metric` takes (docs/sweep-plots.md)\n";
}

}  // namespace bubblesim
