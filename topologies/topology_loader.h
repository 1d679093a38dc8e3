#pragma once
// Loading a Topology from YAML: the general form (vertices + links), a builder form
// ({builder: single-node | multi-node | ..., ...}), or a string naming a YAML file that holds
// either (relative to `base_dir`). Problems are added to `d` with file:line:column.

#include <optional>
#include <string>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology.h"

namespace bubblesim {

std::optional<Topology> load_topology(const YamlNode& node, const std::string& base_dir,
                                      DiagnosticList& d);

}  // namespace bubblesim
