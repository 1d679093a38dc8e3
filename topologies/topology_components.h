#pragma once
// Which vertices of a topology can reach each other: the connected components of its graph (links
// are full duplex, so those of the undirected graph), from Boost.Graph's connected_components.
// Placement uses it to refuse GPUs that no route joins, before any route is searched.

#include <cstdint>
#include <vector>

#include "topologies/topology.h"

namespace bubblesim {

/// The component of every vertex, indexed by VertexId. Components are numbered from 0 in the order
/// of their lowest vertex id (so vertex 0 is in component 0): the same topology always gives the
/// same numbers.
std::vector<std::int32_t> connected_components(const Topology& topology);

}  // namespace bubblesim
