// The built-in topology builders, in the order `builder:` errors list them.
#include "topologies/builders/topology_builder_registry.h"

namespace bubblesim {

void register_single_node_builder(TopologyBuilderRegistry& registry);  // single_node_builder.cpp
void register_cluster_builders(TopologyBuilderRegistry& registry);     // cluster_builders.cpp

const TopologyBuilderRegistry& builtin_topology_builders() {
  static const TopologyBuilderRegistry registry = [] {
    TopologyBuilderRegistry r;
    register_single_node_builder(r);
    register_cluster_builders(r);
    return r;
  }();
  return registry;
}

}  // namespace bubblesim
