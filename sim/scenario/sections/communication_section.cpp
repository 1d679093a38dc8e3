#include "sim/scenario/sections/communication_section.h"

#include <fmt/format.h>

#include <memory>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/component_settings.h"
#include "sim/scenario/sections/placement.h"
#include "topologies/topology_loader.h"

namespace bubblesim {
namespace {

void read_communication(LoadContext& context, Scenario& sc) {
  DiagnosticList& diags = context.diags();
  std::optional<YamlNode> comm = context.section("communication");
  std::optional<YamlNode> top_topology = context.section("topology");
  std::optional<YamlNode> placement = context.section("placement");
  std::optional<YamlNode> topology_node = top_topology;
  std::optional<YamlNode> all_to_all;  // communication.all_to_all, when given
  std::string model;

  if (comm) {
    // Its own keys and those the engine's behaviours declare here (blocking sends' `p2p`, host
    // gaps' `p2p_sync_gap`; component_settings.h), where the list has always named them.
    std::vector<std::string> keys{"model", "delay", "topology"};
    for (std::string& k : component_keys("communication")) keys.push_back(std::move(k));
    keys.emplace_back("all_to_all");
    MapReader c(*comm, diags, std::move(keys));
    if (comm->is_map()) {
      if (c.has("all_to_all")) {
        if (auto m = c.choice("all_to_all", {"shared", "idle"})) {
          all_to_all = c.get("all_to_all");
          sc.communication.all_to_all =
              *m == "idle" ? AllToAllNetwork::Idle : AllToAllNetwork::Shared;
        }
      }
      read_component_settings("communication", c, diags, sc);
      std::optional<YamlNode> inner = c.get("topology");
      if (inner && top_topology) {
        inner->error(diags, fmt::format("the topology is given twice (also at line {}); keep one",
                                        top_topology->location().line));
      } else if (inner) {
        topology_node = inner;
      }
      if (c.has("model")) {
        auto m = c.choice("model", {"fixed-delay", "topology"});
        if (!m) return;
        model = *m;
      } else {
        model = topology_node ? "topology" : "fixed-delay";
      }
      if (model == "fixed-delay") {
        sc.communication.kind = CommunicationKind::FixedDelay;
        if (auto d = c.time("delay")) sc.communication.delay = *d;
        if (topology_node) {
          topology_node->error(diags,
                               "a topology is given but communication.model is fixed-delay; set "
                               "'model: topology' or remove the topology");
        }
      } else if (auto d = c.get("delay")) {
        d->error(diags,
                 "'delay' is only used with 'model: fixed-delay' (the topology's links give the "
                 "delays)");
      }
    } else {
      return;
    }
  } else {
    model = topology_node ? "topology" : "fixed-delay";
  }

  if (all_to_all && (model == "fixed-delay" || sc.parallelism.ep <= 1)) {
    all_to_all->error(diags,
                      model == "fixed-delay"
                          ? "where the expert all-to-all runs: a fixed-delay network has no "
                            "links for it (allowed: shared or idle, with communication.model: "
                            "topology and parallelism.ep > 1)"
                          : "where the expert all-to-all runs: there is none without expert "
                            "parallelism (allowed: shared or idle, with parallelism.ep > 1)");
  }
  if (model == "fixed-delay") {
    sc.communication.kind = CommunicationKind::FixedDelay;
    if (placement) {
      placement->error(diags, "'placement' needs a topology (communication.model: topology)");
    }
    return;
  }
  sc.communication.kind = CommunicationKind::Topology;
  if (!topology_node) {
    comm->error(
        diags,
        "'model: topology' needs a topology (communication.topology or a top-level 'topology')");
    return;
  }
  std::optional<Topology> topo = load_topology(*topology_node, context.base_dir(), diags);
  if (!topo) return;
  // first_principles.nccl: traffic between nodes at the share of the NICs' line rate NCCL
  // reaches (the GPU preset's nccl.net_efficiency; docs/first-principles.md). The model section,
  // read before this one, gave the GPU.
  if (sc.gpu && sc.gpu->mechanisms.nccl && sc.gpu->measured.net_efficiency > 0)
    topo->scale_bandwidth(VertexKind::Nic, sc.gpu->measured.net_efficiency);
  auto shared = std::make_shared<const Topology>(std::move(*topo));
  sc.communication.topology = shared;
  if (sc.stages > 0) read_placement(placement, *topology_node, *shared, sc, diags);
}

}  // namespace

void read_communication_section(LoadContext& context, Scenario& sc) {
  read_communication(context, sc);
  if (sc.parallelism.enabled && sc.communication.kind != CommunicationKind::Topology) {
    context.diags().add(Diagnostic{
        sc.parallelism.where, "parallelism",
        "parallelism and data_parallel need a topology (communication.model: topology)"});
  }
}

}  // namespace bubblesim
