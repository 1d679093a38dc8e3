#include "sim/scenario/sections/placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sim/scenario/scenario.h"
#include "topologies/topology_components.h"

namespace bubblesim {
namespace {

// Every placed GPU must reach every other (a schedule may send between any two stages, a
// collective between any two ranks; a missing route would otherwise be an instantaneous transfer).
// `what` names a position of the list ("stage", "rank").
void require_connected(const YamlNode& where, const Topology& topo,
                       const std::vector<VertexId>& gpus, const char* what, DiagnosticList& diags) {
  if (gpus.size() < 2) return;
  const std::vector<std::int32_t> component = connected_components(topo);
  auto of = [&](VertexId v) { return component[static_cast<std::size_t>(v)]; };
  for (std::size_t s = 1; s < gpus.size(); ++s) {
    if (of(gpus[s]) != of(gpus[0])) {
      where.error(diags,
                  fmt::format("no route between '{}' ({} 0) and '{}' ({} {}): the topology "
                              "does not connect them",
                              topo.vertex_name(gpus[0]), what, topo.vertex_name(gpus[s]), what, s));
      return;
    }
  }
}

/// "pipeline 4 x dp 2 x tp 8" (and " x cp 2" under context parallelism).
std::string world_parts(std::size_t stages, const ParallelismSpec& par) {
  std::string out = fmt::format("pipeline {} x dp {} x tp {}", stages, par.dp, par.tp);
  if (par.cp > 1) out += fmt::format(" x cp {}", par.cp);
  return out;
}

}  // namespace

void read_placement(const std::optional<YamlNode>& placement, const YamlNode& topology_node,
                    const Topology& topo, Scenario& sc, DiagnosticList& diags) {
  const std::vector<VertexId> gpus = topo.gpus();
  const auto p = static_cast<std::size_t>(sc.stages);
  ParallelismSpec& par = sc.parallelism;
  const auto world = static_cast<std::size_t>(par.world(sc.stages));
  if (par.enabled && (!placement || (placement->is_sequence() &&
                                     placement->elements().size() == world && world != p))) {
    // Ranks in the `order` layout over the topology's GPUs (or the placement list, rank order).
    if (!placement && gpus.size() < world) {
      topology_node.error(diags, fmt::format("the topology has {} GPUs but the run needs {} ({})",
                                             gpus.size(), world, world_parts(p, par)));
      return;
    }
    std::vector<VertexId> ranks(
        gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(std::min(world, gpus.size())));
    if (placement) {
      ranks.clear();
      for (const YamlNode& e : placement->elements()) {
        auto name = e.as_string(diags);
        std::optional<VertexId> v = name ? topo.find(*name) : std::nullopt;
        if (!v || topo.vertex_kind(*v) != VertexKind::Gpu) {
          if (name) e.error(diags, fmt::format("'{}' is not a GPU of the topology", *name));
          return;
        }
        if (std::find(ranks.begin(), ranks.end(), *v) != ranks.end()) {
          e.error(diags, fmt::format("GPU '{}' is used twice", *name));
          return;
        }
        ranks.push_back(*v);
      }
    }
    require_connected(placement ? *placement : topology_node, topo, ranks, "rank", diags);
    par.gpus = ranks;
    sc.communication.placement.clear();
    for (std::size_t s = 0; s < p; ++s) {
      sc.communication.placement.push_back(
          ranks[par.rank_index(sc.stages, static_cast<std::int32_t>(s), 0, 0)]);
    }
    return;
  }
  if (par.enabled && placement && world != p) {
    placement->error(
        diags,
        fmt::format("placement lists {} GPUs; with parallelism it lists all {} ranks ({}) in the "
                    "order layout",
                    placement->is_sequence() ? placement->elements().size() : 0, world,
                    world_parts(p, par)));
    return;
  }
  if (!placement) {
    if (gpus.size() < p) {
      topology_node.error(
          diags, fmt::format("the topology has {} GPUs but the pipeline has {} stages (one GPU "
                             "per stage is needed)",
                             gpus.size(), p));
      return;
    }
    sc.communication.placement.assign(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(p));
    require_connected(topology_node, topo, sc.communication.placement, "stage", diags);
    return;
  }
  if (!placement->is_sequence()) {
    placement->error(diags, fmt::format("expected a list of GPU names (one per stage), got {}",
                                        placement->is_scalar() ? "'" + placement->describe() + "'"
                                                               : placement->describe()));
    return;
  }
  std::vector<YamlNode> elements = placement->elements();
  if (elements.size() != p) {
    placement->error(
        diags, fmt::format("placement lists {} GPUs for {} pipeline stages (one GPU per stage)",
                           elements.size(), p));
    return;
  }
  std::vector<std::string> gpu_names;
  for (VertexId g : gpus) gpu_names.push_back(topo.vertex_name(g));
  std::vector<std::string> all_names;
  for (VertexId v = 0; v < topo.vertex_count(); ++v) all_names.push_back(topo.vertex_name(v));
  std::vector<VertexId> out;
  bool ok = true;
  for (std::size_t s = 0; s < elements.size(); ++s) {
    std::optional<std::string> name = elements[s].as_string(diags);
    if (!name) {
      ok = false;
      continue;
    }
    std::optional<VertexId> v = topo.find(*name);
    if (!v) {
      std::string suggestion = closest_match(*name, gpu_names);
      if (suggestion.empty()) suggestion = closest_match(*name, all_names);
      std::string known =
          gpu_names.size() <= 16
              ? fmt::format("{}", fmt::join(gpu_names, ", "))
              : fmt::format("{}, ..., {}",
                            fmt::join(gpu_names.begin(), gpu_names.begin() + 8, ", "),
                            gpu_names.back());
      elements[s].error(
          diags,
          fmt::format("unknown vertex '{}'{} (GPUs: {})", *name,
                      suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                      known));
      ok = false;
      continue;
    }
    if (topo.vertex_kind(*v) != VertexKind::Gpu) {
      elements[s].error(diags, fmt::format("'{}' is a {}, not a GPU", *name,
                                           vertex_kind_name(topo.vertex_kind(*v))));
      ok = false;
      continue;
    }
    for (std::size_t t = 0; t < out.size(); ++t) {
      if (out[t] == *v) {
        elements[s].error(diags,
                          fmt::format("GPU '{}' is used twice (already by stage {})", *name, t));
        ok = false;
      }
    }
    out.push_back(*v);
  }
  if (ok) {
    sc.communication.placement = out;
    require_connected(*placement, topo, sc.communication.placement, "stage", diags);
  }
  if (ok && par.enabled) par.gpus = std::move(out);  // dp = tp = 1: the ranks are the stages
}

}  // namespace bubblesim
