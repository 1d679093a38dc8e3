#include "sim/scenario/sections/schedules_section.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/param_reader.h"

namespace bubblesim {
namespace {

void read_schedule(const YamlNode& entry, const Registry& registry, Scenario& sc,
                   DiagnosticList& diags) {
  std::optional<YamlNode> name_node;
  std::optional<YamlNode> params_node;
  std::optional<MapReader> m;
  if (entry.is_map()) {
    m.emplace(entry, diags, std::vector<std::string>{"name", "params"});
    name_node = m->require("name");
    params_node = m->get("params");
  } else if (entry.is_scalar() && !entry.is_null()) {
    name_node = entry;
  } else {
    entry.error(diags,
                fmt::format("expected a schedule name or {{name: ..., params: {{...}}}}, got {}",
                            entry.describe()));
    return;
  }
  if (!name_node) return;
  std::optional<std::string> name = name_node->as_string(diags);
  if (!name) return;
  const Generator* gen = registry.find(*name);
  if (!gen) {
    name_node->error(diags, registry.unknown_name_message(*name));
    return;
  }
  ScheduleRequest req;
  req.name = *name;
  req.where = entry.location();
  std::vector<std::string> spec_names;
  for (const ParamSpec& spec : gen->info.params) spec_names.push_back(spec.name);
  bool ok = true;
  std::optional<MapReader> params;
  if (params_node && !params_node->is_null()) {
    params.emplace(*params_node, diags, spec_names);
    params->set_key_noun("parameter");
    ok = params_node->is_map();
  }
  for (const ParamSpec& spec : gen->info.params) {
    std::optional<YamlNode> given =
        params && params_node->is_map() ? params->get(spec.name) : std::nullopt;
    if (given) {
      if (auto v = read_param(*given, spec, diags))
        req.params.set(spec.name, *v);
      else
        ok = false;
    } else if (!spec.optional_default) {
      req.params.set(spec.name, spec.default_value);
    }
  }
  if (ok) sc.schedules.push_back(std::move(req));
}

}  // namespace

void read_schedules_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("schedules");
  const Registry& registry = context.registry();
  DiagnosticList& diags = context.diags();
  if (!node) {
    for (const std::string& name : registry.names()) {
      if (name == "from-file") continue;  // needs a file: runs only when named
      const Generator* gen = registry.find(name);
      ScheduleRequest req;
      req.name = name;
      req.params = ParamValues::defaults(gen->info.params);
      req.defaulted = true;
      sc.schedules.push_back(std::move(req));
    }
    return;
  }
  if (node->is_scalar() && !node->is_null()) {
    read_schedule(*node, registry, sc, diags);  // a single name is accepted as a one-entry list
    return;
  }
  if (!node->is_sequence()) {
    node->error(diags, fmt::format("expected a list of schedules, got {}", node->describe()));
    return;
  }
  std::vector<YamlNode> entries = node->elements();
  if (entries.empty()) {
    node->error(diags, fmt::format("expected at least one schedule (known: {})",
                                   fmt::join(registry.names(), ", ")));
    return;
  }
  if (entries.size() > kMaxScheduleEntries) {
    node->error(diags, fmt::format("{} schedules listed, more than the limit of {} (compare "
                                   "parameter variants with a sweep: bubblesim sweep)",
                                   entries.size(), kMaxScheduleEntries));
    return;
  }
  for (const YamlNode& e : entries) {
    const std::size_t before = sc.schedules.size();
    read_schedule(e, registry, sc, diags);
    if (sc.schedules.size() == before) continue;
    const ScheduleRequest& added = sc.schedules.back();
    for (std::size_t i = 0; i < before; ++i) {
      const ScheduleRequest& earlier = sc.schedules[i];
      if (earlier.name != added.name || earlier.params.all() != added.params.all()) continue;
      e.error(diags, fmt::format("'{}' with these parameters is already listed at line {}:{}; "
                                 "each schedule runs once (remove the repeat)",
                                 added.name, earlier.where.line, earlier.where.column));
      sc.schedules.pop_back();
      break;
    }
  }
}

}  // namespace bubblesim
