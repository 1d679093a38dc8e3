#pragma once
// The HTML report's topology section: the scenario's topology as a small inline SVG graph
// (topology_layout.h: layered by hops from the GPUs, large topologies aggregated per node, at
// most kTopologyGraphMaxNodes nodes) with each drawn link's colour and width by its busy time as
// a share of the schedule's makespan (the busier direction, or the busiest link an aggregated
// edge stands for; dashed grey: no traffic). Hovering a link shows its bytes and busy time per
// direction (a summary for aggregated edges); hovering a node shows its kind, members and the
// pipeline devices placed on it. One graph per schedule that ran (the first shown, a <select>
// switches), since each schedule loads the links differently.
// For tests: each graph is `<svg class="topology" data-schedule=LABEL data-nodes=N
// data-edges=M>`, each node a `<g class="topo-node" data-vertex=LABEL>`, each link a
// `<path class="topo-link" data-busy-ps=... data-bytes=...>` (busiest direction, bytes in all).

#include <string>

#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// The section (heading included), or "" when the scenario has no topology.
std::string html_topology_section(const Scenario& scenario, const ScenarioRun& result);

}  // namespace bubblesim
