#pragma once
// `placement: [gpu names]` (part of the communication section): which GPU vertex of the topology
// runs each pipeline stage (default: the topology's GPUs in order), or, with `parallelism`, every
// rank in the `order` layout. Checks that the GPUs exist, are GPUs, are used once and are
// connected. Fills Scenario::communication.placement and Scenario::parallelism.gpus.

#include <optional>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology.h"

namespace bubblesim {

struct Scenario;

/// `placement` may be absent; `topology_node` locates errors about the topology's GPUs.
void read_placement(const std::optional<YamlNode>& placement, const YamlNode& topology_node,
                    const Topology& topology, Scenario& scenario, DiagnosticList& diags);

}  // namespace bubblesim
