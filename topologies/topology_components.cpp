#include "topologies/topology_components.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>

namespace bubblesim {

std::vector<std::int32_t> connected_components(const Topology& topology) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Graph g(static_cast<std::size_t>(topology.vertex_count()));
  // Both directions of a link join the same two vertices; one undirected edge each is enough.
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const VertexId a = topology.link_source(l), b = topology.link_target(l);
    if (a < b) boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b), g);
  }
  std::vector<std::int32_t> component(static_cast<std::size_t>(topology.vertex_count()));
  // Boost numbers components in the order its depth-first search meets them, starting at vertex 0
  // and taking the vertices in id order: the order of their lowest vertex.
  boost::connected_components(g, component.data());
  return component;
}

}  // namespace bubblesim
