#pragma once
// Topologies exported by network tools: a GraphML file (the Internet Topology Zoo's format, yEd,
// NetworkX's write_graphml) or a GraphViz DOT file (NetworkX's write_dot, most graph tools), read
// into a bubblesim Topology. Each vertex is named by its id and carries a `kind` attribute (gpu,
// host, pcie-switch, nic, switch) and optionally `nic` (a GPU's own NIC); each edge carries
// `bandwidth` and `latency` with units ("400Gbps", "2us"), or, as the Topology Zoo writes it,
// `LinkSpeedRaw` in bits per second. Attributes a file lacks come from `GraphFileDefaults` (the
// scenario's `topology: {file: ..., kind: ..., bandwidth: ..., latency: ...}`). Every problem is
// reported with the file, the line of the element and the attribute (docs/topologies.md).

#include <optional>
#include <string>

#include "sim/units/diagnostics.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/topology.h"

namespace bubblesim {

enum class GraphFileFormat { GraphMl, Dot };

/// The format a file name's extension names: .graphml -> GraphML, .dot and .gv -> DOT.
std::optional<GraphFileFormat> graph_file_format(const std::string& path);

/// What an element without the attribute gets; unset: the attribute is required.
struct GraphFileDefaults {
  std::optional<std::string> kind;
  std::optional<Bandwidth> bandwidth;
  std::optional<Time> latency;
};

/// Reads the topology in `path`. Problems go to `d` (file:line:column of the element, the
/// attribute, the bad value and what is allowed); returns nullopt when there was any.
std::optional<Topology> load_graph_file(const std::string& path, GraphFileFormat format,
                                        const GraphFileDefaults& defaults, DiagnosticList& d);

}  // namespace bubblesim
