#pragma once
// TopologyLayout: a topology reduced to a small drawable graph, laid out deterministically (the
// HTML report's topology section, html_topology.h).
//
// Vertices are layered by hop distance from the GPUs (GPUs at layer 0, the switches they connect
// to at 1, ...; a vertex no GPU reaches goes one layer above the highest). A topology of at most
// `max_nodes` vertices is drawn vertex by vertex. A larger one is aggregated: first per node (the
// name prefix up to the first '.', which the multi-node builders give every vertex of a node:
// "n3.gpu0", "n3.nic0"), then, if there are still more than `max_nodes` groups, consecutive
// groups of a layer are merged (in vertex order) until every layer fits its share. At most
// `max_nodes` nodes are drawn whenever there are at most that many layers. Physical links inside
// a drawn node are not drawn; a drawn edge stands for every directed link between two nodes.
// Within a layer nodes are ordered by the mean position of their neighbours in the layers below
// (ties by their first vertex), so a switch sits above the GPUs it serves.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace bubblesim {

/// Most nodes the report draws; larger topologies are aggregated (see above).
inline constexpr std::size_t kTopologyGraphMaxNodes = 48;
/// Most nodes side by side in one row; a fuller layer wraps onto further rows.
inline constexpr std::size_t kTopologyGraphRowNodes = 16;

struct TopologyNode {
  std::string label;                // the vertex name, or a group's ("n3", "n0 .. n511")
  std::vector<VertexId> members;    // in vertex order
  std::int32_t layer = 0;           // hops from the nearest GPU (the lowest of its members)
  std::int32_t row = 0;             // drawing row, 0 at the top
  std::int32_t column = 0;          // position within the row
  std::int32_t gpus = 0;            // GPU members
  std::vector<LinkId> inner_links;  // directed links between two members
};

struct TopologyEdge {
  std::size_t a = 0, b = 0;   // node indices, a < b
  std::vector<LinkId> links;  // directed links between the two nodes (both directions), in order
};

struct TopologyLayout {
  std::vector<TopologyNode> nodes;
  std::vector<TopologyEdge> edges;  // ordered by (a, b)
  std::int32_t rows = 0;
  std::int32_t columns = 0;  // the widest row
  /// "" when every vertex is drawn; else how it was aggregated, for the page.
  std::string aggregation;
};

/// Lays out `topology` (see above). Deterministic: the same topology gives the same layout.
TopologyLayout layout_topology(const Topology& topology,
                               std::size_t max_nodes = kTopologyGraphMaxNodes);

}  // namespace bubblesim
