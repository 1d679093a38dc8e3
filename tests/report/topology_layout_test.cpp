// The HTML report's topology graph layout: layers by hops from the GPUs, every vertex drawn up to
// the cap, per-node boxes beyond it, merged layers for the largest clusters, deterministic.
#include "sim/report/topology_layout.h"

#include <doctest/doctest.h>

#include <set>

#include "topologies/topology_builders.h"

using namespace bubblesim;

namespace {

const TopologyNode& node_named(const TopologyLayout& l, const std::string& label) {
  for (const TopologyNode& n : l.nodes)
    if (n.label == label) return n;
  FAIL("no node " << label);
  return l.nodes.front();
}

/// Every vertex is in exactly one node.
void check_partition(const Topology& t, const TopologyLayout& l) {
  std::set<VertexId> seen;
  for (const TopologyNode& n : l.nodes)
    for (VertexId v : n.members) CHECK(seen.insert(v).second);
  CHECK(seen.size() == static_cast<std::size_t>(t.vertex_count()));
}

}  // namespace

TEST_CASE("a DGX-like node is drawn vertex by vertex, GPUs at the bottom") {
  const Topology t = build_single_node(NodeParams{});
  const TopologyLayout l = layout_topology(t);
  CHECK(l.aggregation.empty());
  CHECK(l.nodes.size() == 14);  // 8 GPUs, nvswitch0, host0, 4 PCIe switches
  check_partition(t, l);
  CHECK(l.edges.size() == 8 + 8 + 4);  // GPU-NVSwitch, GPU-PCIe, PCIe-host
  for (const TopologyEdge& e : l.edges) CHECK(e.links.size() == 2);  // both directions
  CHECK(l.rows == 3);
  for (int g = 0; g < 8; ++g) {
    const TopologyNode& gpu = node_named(l, "gpu" + std::to_string(g));
    CHECK(gpu.layer == 0);
    CHECK(gpu.row == 2);
    CHECK(gpu.column == g);
  }
  CHECK(node_named(l, "nvswitch0").layer == 1);
  CHECK(node_named(l, "pcie0").layer == 1);
  CHECK(node_named(l, "host0").layer == 2);
  CHECK(node_named(l, "host0").row == 0);
  // pcie0 (over gpu0 and gpu1) is left of pcie3 (over gpu6 and gpu7).
  CHECK(node_named(l, "pcie0").column < node_named(l, "pcie3").column);
}

TEST_CASE("a cluster over the cap is drawn as one box per node around the network switch") {
  ClusterParams p;
  p.nodes = 4;  // 4 x (8 GPUs, 8 NICs, nvswitch, host, 4 PCIe) + netsw0 = 89 vertices
  const Topology t = build_cluster(p);
  const TopologyLayout l = layout_topology(t);
  CHECK_FALSE(l.aggregation.empty());
  REQUIRE(l.nodes.size() == 5);
  check_partition(t, l);
  for (int n = 0; n < 4; ++n) {
    const TopologyNode& box = node_named(l, "n" + std::to_string(n));
    CHECK(box.gpus == 8);
    CHECK(box.members.size() == 22);
    CHECK(box.row == 1);
    CHECK(box.column == n);
    CHECK_FALSE(box.inner_links.empty());
  }
  CHECK(node_named(l, "netsw0").row == 0);
  REQUIRE(l.edges.size() == 4);
  for (const TopologyEdge& e : l.edges) CHECK(e.links.size() == 16);  // 8 NIC links, 2 ways
}

TEST_CASE("a large cluster is capped: layers merged, deterministic") {
  constexpr std::int32_t kGpus = 65536;  // 8192 nodes of 8: thousands of leaves and nodes
  ClusterParams p;
  p.nodes = kGpus / 8;
  p.shape = NetworkShape::FatTree;
  p.switch_radix = 64;
  const Topology t = build_cluster(p);
  const TopologyLayout a = layout_topology(t);
  const TopologyLayout b = layout_topology(t);
  CHECK(a.nodes.size() <= kTopologyGraphMaxNodes);
  CHECK(a.nodes.size() > 3);
  CHECK(a.aggregation.find("merged") != std::string::npos);
  check_partition(t, a);
  std::int32_t gpus = 0;
  for (const TopologyNode& n : a.nodes) gpus += n.gpus;
  CHECK(gpus == kGpus);
  for (const TopologyNode& n : a.nodes) CHECK(n.column < static_cast<int>(kTopologyGraphRowNodes));
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i].label == b.nodes[i].label);
    CHECK(a.nodes[i].row == b.nodes[i].row);
    CHECK(a.nodes[i].column == b.nodes[i].column);
  }
  CHECK(a.edges.size() == b.edges.size());
}

TEST_CASE("a vertex no GPU reaches is drawn one layer above the rest") {
  Topology t;
  const VertexId g0 = t.add_vertex("gpu0", VertexKind::Gpu);
  const VertexId g1 = t.add_vertex("gpu1", VertexKind::Gpu);
  t.add_vertex("lonely", VertexKind::Switch);
  t.add_link(g0, g1, Bandwidth::bytes_per_second(1e9), Time::zero());
  const TopologyLayout l = layout_topology(t);
  CHECK(node_named(l, "lonely").layer == 1);
  CHECK(node_named(l, "lonely").row == 0);
  CHECK(node_named(l, "gpu0").row == 1);
  REQUIRE(l.edges.size() == 1);
  CHECK(l.edges.front().links.size() == 2);
}
