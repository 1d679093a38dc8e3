// `builder: multi-node | fat-tree | rail`: nodes of the single-node shape with one NIC per GPU,
// joined by one switch, a two-level fat tree, or rail switches (build_cluster in
// topology_builders.h).
#include <fmt/format.h>

#include "topologies/builders/builder_keys.h"
#include "topologies/builders/topology_builder_registry.h"

namespace bubblesim {
namespace {

/// The keys every cluster shape reads; `with_radix` adds the fat tree's switch_radix.
std::vector<std::string> cluster_keys(bool with_radix) {
  std::vector<std::string> keys{"nodes", "gpus_per_node", "nvlink", "pcie", "gpus_per_pcie_switch",
                                "nic",   "network",       "sharp"};
  if (with_radix) keys.push_back("switch_radix");
  return keys;
}

/// Reads the keys of a cluster of `shape` and builds it.
std::optional<Topology> build_shape(MapReader& r, DiagnosticList& d, NetworkShape shape) {
  const std::size_t errors_before = d.size();
  ClusterParams p;
  p.shape = shape;
  if (auto g = r.get("gpus_per_node")) {
    if (auto v = g->as_integer(d, 1, kMaxTopologyGpus)) p.node.gpus = static_cast<std::int32_t>(*v);
  }
  read_node_links(r, p.node, d);
  if (auto nodes_node = r.get("nodes")) {
    if (auto n = nodes_node->as_integer(d, 1, kMaxTopologyGpus)) {
      p.nodes = static_cast<std::int32_t>(*n);
      const std::int64_t total = *n * p.node.gpus;
      if (total > kMaxTopologyGpus) {
        nodes_node->error(
            d, fmt::format("{} nodes x {} GPUs = {} GPUs is more than the limit of {} "
                           "(kMaxTopologyGpus in topologies/topology_builders.h: raise it and "
                           "rebuild)",
                           *n, p.node.gpus, total, kMaxTopologyGpus));
      }
    }
  }
  p.nic = read_link_params(r, "nic", p.nic, d);
  const LinkParams network{p.nic.bandwidth, p.network_latency};
  p.network_latency = read_link_params(r, "network", network, d, false).latency;
  if (shape == NetworkShape::FatTree) {
    if (auto k = r.get("switch_radix")) {
      if (auto v = k->as_integer(d, 2, 1024)) {
        if (*v % 2 != 0)
          k->error(d, fmt::format("{} is odd; a fat tree needs an even switch radix", *v));
        p.switch_radix = static_cast<std::int32_t>(*v);
      }
    }
  }
  if (auto sharp = r.get("sharp")) {
    if (auto on = sharp->as_boolean(d)) p.sharp = *on;
  }
  r.finish();
  if (d.size() != errors_before) return std::nullopt;
  return build_cluster(p);
}

TopologyBuilder cluster_builder(std::string name, std::string description, NetworkShape shape) {
  return TopologyBuilder{
      std::move(name), std::move(description), cluster_keys(shape == NetworkShape::FatTree),
      [shape](MapReader& r, DiagnosticList& d) { return build_shape(r, d, shape); }};
}

}  // namespace

void register_cluster_builders(TopologyBuilderRegistry& registry) {
  registry.add(cluster_builder("multi-node", "nodes joined by one network switch",
                               NetworkShape::SingleSwitch));
  registry.add(cluster_builder("fat-tree", "nodes joined by a two-level k-ary fat tree",
                               NetworkShape::FatTree));
  registry.add(cluster_builder("rail", "rail-optimized: NIC i of every node on rail switch i",
                               NetworkShape::Rail));
}

}  // namespace bubblesim
