#pragma once
// Keys the topology builders share (topology_loader.h lists them with their defaults): link
// parameters `{bandwidth, latency}` and the node keys nvlink, pcie and gpus_per_pcie_switch.

#include <string>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology_builders.h"

namespace bubblesim {

/// Reads `key: {bandwidth, latency}` (or `{latency}` without `with_bandwidth`) over `defaults`.
LinkParams read_link_params(MapReader& parent, const std::string& key, LinkParams defaults,
                            DiagnosticList& d, bool with_bandwidth = true);

/// Reads nvlink, pcie and gpus_per_pcie_switch into `node` (its gpus already read).
void read_node_links(MapReader& reader, NodeParams& node, DiagnosticList& d);

}  // namespace bubblesim
