#include "sim/scenario/sections/faults_section.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/pipeline_section.h"

namespace bubblesim {
namespace {

void read_stragglers(const YamlNode& node, Scenario& sc, DiagnosticList& diags) {
  if (!node.is_sequence()) {
    node.error(
        diags,
        fmt::format("expected a list of stragglers, e.g. [{{device: 3, slowdown: 1.5}}], got {}",
                    node.is_scalar() ? "'" + node.describe() + "'" : node.describe()));
    return;
  }
  std::vector<double> slowdown(static_cast<std::size_t>(std::max(sc.stages, 0)), 1.0);
  std::vector<bool> seen(slowdown.size(), false);
  for (const YamlNode& e : node.elements()) {
    MapReader r(e, diags, {"device", "slowdown"});
    if (!e.is_map()) continue;
    std::optional<std::int64_t> device = r.integer("device", 0, kMaxStages - 1);
    std::optional<double> factor = r.real("slowdown", 0.01, 1000.0);
    if (!device || !factor || sc.stages <= 0) continue;
    if (*device >= sc.stages) {
      r.get("device")->error(
          diags, fmt::format("device {} does not exist: the pipeline has {} devices (0 to {})",
                             *device, sc.stages, sc.stages - 1));
      continue;
    }
    const auto d = static_cast<std::size_t>(*device);
    if (seen[d]) {
      r.get("device")->error(diags, fmt::format("device {} is listed twice", *device));
      continue;
    }
    seen[d] = true;
    slowdown[d] = *factor;
  }
  if (std::find(seen.begin(), seen.end(), true) != seen.end())
    sc.faults.slowdown = std::move(slowdown);
}

void read_link_faults(const YamlNode& node, Scenario& sc, DiagnosticList& diags) {
  if (!node.is_sequence()) {
    node.error(
        diags,
        fmt::format("expected a list of link faults, e.g. [{{between: [gpu0, gpu1], at: 10ms, cut: "
                    "true}}], got {}",
                    node.is_scalar() ? "'" + node.describe() + "'" : node.describe()));
    return;
  }
  const Topology* topo = sc.communication.topology.get();
  if (sc.communication.kind != CommunicationKind::Topology) {
    node.error(diags, "link faults need a topology (communication.model: topology)");
    return;
  }
  for (const YamlNode& e : node.elements()) {
    MapReader r(e, diags, {"between", "at", "bandwidth", "cut"});
    if (!e.is_map()) continue;
    LinkFaultSpec spec;
    std::optional<YamlNode> between = r.require("between");
    std::optional<Time> at = r.time("at");
    if (!r.has("at")) r.require("at");
    const bool has_bandwidth = r.has("bandwidth"), has_cut = r.has("cut");
    if (has_bandwidth == has_cut) {
      e.error(diags, "a link fault needs exactly one of 'bandwidth' (degraded) or 'cut: true'");
      continue;
    }
    if (has_bandwidth) {
      spec.bandwidth = r.bandwidth("bandwidth");
      if (!spec.bandwidth) continue;
    } else {
      std::optional<bool> cut = r.boolean("cut");
      if (!cut) continue;
      if (!*cut) {
        r.get("cut")->error(
            diags, "'cut: false' is no fault; remove the entry or give a degraded 'bandwidth'");
        continue;
      }
    }
    if (!between || !at || topo == nullptr) continue;
    if (at->ps() < 0) {
      r.get("at")->error(diags, fmt::format("the fault time must not be negative, got {}", *at));
      continue;
    }
    spec.at = *at;
    std::vector<YamlNode> ends =
        between->is_sequence() ? between->elements() : std::vector<YamlNode>{};
    if (ends.size() != 2) {
      between->error(diags,
                     fmt::format("expected a list of two vertex names, e.g. [gpu0, gpu1], got {}",
                                 between->is_sequence() ? fmt::format("{} names", ends.size())
                                                        : between->describe()));
      continue;
    }
    std::optional<VertexId> ids[2];
    bool ok = true;
    for (int i = 0; i < 2; ++i) {
      std::optional<std::string> name = ends[static_cast<std::size_t>(i)].as_string(diags);
      if (!name) {
        ok = false;
        continue;
      }
      ids[i] = topo->find(*name);
      if (!ids[i]) {
        std::vector<std::string> all_names;
        for (VertexId v = 0; v < topo->vertex_count(); ++v)
          all_names.push_back(topo->vertex_name(v));
        std::string suggestion = closest_match(*name, all_names);
        ends[static_cast<std::size_t>(i)].error(
            diags,
            fmt::format("unknown vertex '{}'{}", *name,
                        suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion)));
        ok = false;
        continue;
      }
      (i == 0 ? spec.a : spec.b) = *name;
    }
    if (!ok) continue;
    spec.links = topo->links_between(*ids[0], *ids[1]);
    std::vector<LinkId> back = topo->links_between(*ids[1], *ids[0]);
    spec.links.insert(spec.links.end(), back.begin(), back.end());
    if (spec.links.empty()) {
      between->error(diags, fmt::format("there is no link between '{}' and '{}'", spec.a, spec.b));
      continue;
    }
    sc.faults.links.push_back(std::move(spec));
  }
}

}  // namespace

// `faults: {stragglers: [{device, slowdown}], links: [{between: [a, b], at, bandwidth | cut}]}`.
void read_faults_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("faults");
  if (!node) return;
  DiagnosticList& diags = context.diags();
  MapReader f(*node, diags, {"stragglers", "links"});
  if (!node->is_map()) return;
  if (auto stragglers = f.get("stragglers")) read_stragglers(*stragglers, sc, diags);
  if (auto links = f.get("links")) read_link_faults(*links, sc, diags);
}

}  // namespace bubblesim
