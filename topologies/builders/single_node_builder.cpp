// `builder: single-node`: N GPUs on one NVSwitch, PCIe switches to one host
// (build_single_node in topology_builders.h).
#include "topologies/builders/builder_keys.h"
#include "topologies/builders/topology_builder_registry.h"

namespace bubblesim {

void register_single_node_builder(TopologyBuilderRegistry& registry) {
  registry.add(TopologyBuilder{"single-node",
                               "one node: GPUs on an NVSwitch, PCIe switches to a host",
                               {"gpus", "nvlink", "pcie", "gpus_per_pcie_switch"},
                               [](MapReader& r, DiagnosticList& d) -> std::optional<Topology> {
                                 const std::size_t errors_before = d.size();
                                 NodeParams node;
                                 if (auto g = r.get("gpus")) {
                                   if (auto v = g->as_integer(d, 1, kMaxTopologyGpus))
                                     node.gpus = static_cast<std::int32_t>(*v);
                                 }
                                 read_node_links(r, node, d);
                                 r.finish();
                                 if (d.size() != errors_before) return std::nullopt;
                                 return build_single_node(node);
                               }});
}

}  // namespace bubblesim
