#include "topologies/topology_loader.h"

#include <doctest/doctest.h>

#include <string>

namespace bubblesim {
namespace {

const std::string kScenarioDir = std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios";
const std::string kDataDir = std::string(BUBBLESIM_SOURCE_DIR) + "/tests/topologies/data";

struct Loaded {
  std::optional<Topology> topology;
  std::string errors;  // every diagnostic rendered, one per line
};

Loaded load_text(const std::string& text, const std::string& base_dir = kScenarioDir) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, "t.yaml", d);
  REQUIRE(doc.ok());
  MapReader top(doc.root(), d, {"topology"});
  auto node = top.require("topology");
  top.finish();
  REQUIRE(node);
  Loaded out;
  out.topology = load_topology(*node, base_dir, d);
  for (const Diagnostic& diag : d.items())
    out.errors += (out.errors.empty() ? "" : "\n") + diag.render();
  CHECK(out.topology.has_value() == d.empty());
  return out;
}

std::string route_names(const Topology& t, const std::string& a, const std::string& b) {
  auto r = t.route(*t.find(a), *t.find(b));
  REQUIRE(r.has_value());
  std::string out;
  for (LinkId l : r->links) out += (out.empty() ? "" : " ") + t.link_name(l);
  return out;
}

TEST_CASE("general form") {
  auto l = load_text(R"(
topology:
  vertices:
    - {name: gpu0, kind: gpu}
    - {name: sw, kind: switch}
    - {name: gpu1, kind: gpu}
    - {name: host0, kind: host}
  links:
    - {between: [gpu0, sw], bandwidth: 10GB/s, latency: 50us}
    - {between: [sw, gpu1], bandwidth: 10GB/s, latency: 50us}
)");
  REQUIRE(l.topology);
  const Topology& t = *l.topology;
  CHECK(l.errors.empty());
  CHECK(t.vertex_count() == 4);
  CHECK(t.link_count() == 4);
  CHECK(t.vertex_kind(*t.find("sw")) == VertexKind::Switch);
  CHECK(t.link_bandwidth(0) == Bandwidth::bytes_per_second(10e9));
  CHECK(t.link_latency(0) == Time::from_ps(50'000'000));
  CHECK(route_names(t, "gpu0", "gpu1") == "gpu0->sw sw->gpu1");
  CHECK_FALSE(t.route(*t.find("gpu0"), *t.find("host0")).has_value());
}

TEST_CASE("general form: a gpu's `nic` decides between equally short routes") {
  const std::string graph = R"(
topology:
  vertices:
    - {name: gpu0, kind: gpu}
    - {name: gpu1, kind: gpu%s}
    - {name: remote, kind: gpu}
    - {name: pcie0, kind: pcie-switch}
    - {name: nic0, kind: nic}
    - {name: nic1, kind: nic}
    - {name: sw, kind: switch}
  links:
    - {between: [gpu0, pcie0], bandwidth: 64GB/s, latency: 1us}
    - {between: [gpu1, pcie0], bandwidth: 64GB/s, latency: 1us}
    - {between: [pcie0, nic0], bandwidth: 64GB/s, latency: 1us}
    - {between: [pcie0, nic1], bandwidth: 64GB/s, latency: 1us}
    - {between: [nic0, sw], bandwidth: 50GB/s, latency: 2us}
    - {between: [nic1, sw], bandwidth: 50GB/s, latency: 2us}
    - {between: [remote, sw], bandwidth: 50GB/s, latency: 2us}
)";
  auto with = [&](const std::string& nic) {
    std::string text = graph;
    text.replace(text.find("%s"), 2, nic);
    return load_text(text);
  };
  auto plain = with("");
  REQUIRE(plain.topology);
  CHECK(route_names(*plain.topology, "gpu1", "remote") ==
        "gpu1->pcie0 pcie0->nic0 nic0->sw sw->remote");
  auto paired = with(", nic: nic1");  // named before the NIC itself is listed
  REQUIRE(paired.topology);
  CHECK(paired.errors.empty());
  CHECK(route_names(*paired.topology, "gpu1", "remote") ==
        "gpu1->pcie0 pcie0->nic1 nic1->sw sw->remote");
  CHECK(route_names(*paired.topology, "remote", "gpu1") ==
        "remote->sw sw->nic1 nic1->pcie0 pcie0->gpu1");
  CHECK(with(", nic: nic2").errors ==
        "t.yaml:5:36: error: topology.vertices[1].nic: unknown vertex 'nic2'; did you mean "
        "'nic0'? (vertices: gpu0, gpu1, remote, pcie0, nic0, nic1, sw)");
  CHECK(with(", nic: pcie0").errors ==
        "t.yaml:5:36: error: topology.vertices[1].nic: 'pcie0' is a pcie-switch, not a nic");
}

TEST_CASE("general form errors: all reported, with positions and alternatives") {
  auto l = load_text(R"(topology:
  vertices:
    - {name: gpu0, kind: gpu}
    - {name: gpu1, kind: gpux}
    - {name: gpu0, kind: host}
    - {name: sw0, kind: switch}
  links:
    - {between: [gpu0, gpu9], bandwidth: 10GB/s, latency: 1us}
    - {between: [sw0, sw0], bandwidth: 10GB/s, latency: 1us}
    - {between: [gpu0, sw0], bandwidth: 10, latency: 1us}
    - {between: [gpu0], bandwidth: 10GB/s, latency: 1us}
    - {between: [gpu0, sw0], bandwidth: 10GB/s}
)");
  CHECK_FALSE(l.topology);
  CHECK(
      l.errors ==
      "t.yaml:4:26: error: topology.vertices[1].kind: 'gpux' is not allowed; did you mean 'gpu'? "
      "(allowed: gpu, host, pcie-switch, nic, switch)\n"
      "t.yaml:5:14: error: topology.vertices[2].name: duplicate vertex name 'gpu0' (first given at "
      "line 3)\n"
      "t.yaml:8:24: error: topology.links[0].between[1]: unknown vertex 'gpu9'; did you mean "
      "'gpu0'? "
      "(vertices: gpu0, sw0)\n"
      "t.yaml:9:17: error: topology.links[1].between: a link from 'sw0' to itself is not allowed\n"
      "t.yaml:10:41: error: topology.links[2].bandwidth: '10' has no unit: a bandwidth needs one "
      "of "
      "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s (bytes) or bps, Mbps, Gbps, Tbps (bits) "
      "(e.g. 25GB/s)\n"
      "t.yaml:11:17: error: topology.links[3].between: expected a list of two vertex names, e.g. "
      "[gpu0, gpu1], "
      "got 1 names\n"
      "t.yaml:12:7: error: topology.links[4]: missing required key 'latency'");
}

TEST_CASE("single-node builder: GPU to GPU over NVLink, not PCIe") {
  auto l = load_text(
      "topology: {builder: single-node, gpus: 4, gpus_per_pcie_switch: 2,\n"
      "  nvlink: {bandwidth: 450GB/s, latency: 1us}, pcie: {bandwidth: 32GB/s, latency: 2us}}\n");
  REQUIRE(l.topology);
  const Topology& t = *l.topology;
  CHECK(t.gpus().size() == 4);
  CHECK(route_names(t, "gpu0", "gpu1") == "gpu0->nvswitch0 nvswitch0->gpu1");
  CHECK(route_names(t, "gpu2", "host0") == "gpu2->pcie1 pcie1->host0");
  CHECK(t.link_latency(t.route(*t.find("gpu2"), *t.find("host0"))->links[0]) ==
        Time::from_ps(2'000'000));
}

TEST_CASE("builder errors") {
  auto l = load_text(
      "topology:\n  builder: multi-node\n  nodes: 131073\n  gpu: 8\n  nic: {bandwidth: 400}\n");
  CHECK(l.errors ==
        "t.yaml:3:10: error: topology.nodes: 131073 nodes x 8 GPUs = 1048584 GPUs is more than the "
        "limit of 1048576 (kMaxTopologyGpus in topologies/topology_builders.h: raise it and "
        "rebuild)\n"
        "t.yaml:5:20: error: topology.nic.bandwidth: '400' has no unit: a bandwidth needs one of "
        "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s (bytes) or bps, Mbps, Gbps, Tbps (bits) "
        "(e.g. 25GB/s)\n"
        "t.yaml:4:3: error: topology.gpu: unknown key 'gpu' (allowed: builder, "
        "nodes, gpus_per_node, nvlink, pcie, gpus_per_pcie_switch, nic, network, sharp, ecmp)");
  auto b = load_text("topology: {builder: multinode}\n");
  CHECK(b.errors ==
        "t.yaml:1:21: error: topology.builder: 'multinode' is not allowed; did you mean "
        "'multi-node'? "
        "(allowed: single-node, multi-node, fat-tree, rail)");
}

TEST_CASE("scenario topology files load; multi-node routes cross NICs and the switch") {
  auto one = load_text("topology: topologies/dgx-h100.yaml\n");
  REQUIRE(one.topology);
  CHECK(one.topology->gpus().size() == 8);
  CHECK(route_names(*one.topology, "gpu0", "gpu5") == "gpu0->nvswitch0 nvswitch0->gpu5");

  auto two = load_text("topology: topologies/dgx-h100-2nodes.yaml\n");
  REQUIRE(two.topology);
  const Topology& t = *two.topology;
  CHECK(t.gpus().size() == 16);
  CHECK(route_names(t, "n0.gpu0", "n1.gpu0") ==
        "n0.gpu0->n0.pcie0 n0.pcie0->n0.nic0 n0.nic0->netsw0 netsw0->n1.nic0 n1.nic0->n1.pcie0 "
        "n1.pcie0->n1.gpu0");
  auto nic_link = t.links_between(*t.find("n0.nic0"), *t.find("netsw0"));
  REQUIRE(nic_link.size() == 1);
  CHECK(t.link_bandwidth(nic_link[0]) == Bandwidth::bytes_per_second(50e9));

  auto four = load_text("topology: topologies/dgx-h100-4nodes.yaml\n");
  REQUIRE(four.topology);
  CHECK(four.topology->gpus().size() == 32);

  auto small = load_text("topology: topologies/two-gpus.yaml\n");
  REQUIRE(small.topology);
  CHECK(route_names(*small.topology, "gpu0", "gpu1") == "gpu0->gpu1");
  CHECK(small.topology->vertex_name(*small.topology->nearest_host(0)) == "host0");
}

TEST_CASE("errors inside a topology file name that file") {
  auto l = load_text("topology: bad-kind.yaml\n", kDataDir);
  CHECK(l.errors ==
        kDataDir +
            "/bad-kind.yaml:4:26: error: topology.vertices[1].kind: 'cpu' is not allowed; "
            "did you mean 'gpu'? (allowed: gpu, host, pcie-switch, nic, switch)");
  auto missing = load_text("topology: nope.yaml\n", kDataDir);
  CHECK(missing.errors == kDataDir + "/nope.yaml: error: cannot open the file for reading");
}

}  // namespace
}  // namespace bubblesim

namespace bubblesim {

TEST_CASE("sharp: the switches that reduce in the network (NCCL's CollNet)") {
  Loaded general = load_text(R"(topology:
  vertices:
    - {name: gpu0, kind: gpu}
    - {name: sw, kind: switch, sharp: true}
    - {name: sw2, kind: switch}
  links:
    - {between: [gpu0, sw], bandwidth: 50GB/s, latency: 1us}
    - {between: [sw, sw2], bandwidth: 50GB/s, latency: 1us}
)");
  REQUIRE(general.topology);
  CHECK(general.topology->sharp(*general.topology->find("sw")));
  CHECK_FALSE(general.topology->sharp(*general.topology->find("sw2")));
  CHECK_FALSE(general.topology->sharp(*general.topology->find("gpu0")));
  Loaded refused = load_text(R"(topology:
  vertices:
    - {name: gpu0, kind: gpu, sharp: true}
)");
  CHECK(refused.errors.find("only a switch reduces in the network") != std::string::npos);
  // A builder's network switches, not the nodes' NVSwitches.
  Loaded fat = load_text(
      "topology: {builder: fat-tree, nodes: 4, gpus_per_node: 8, "
      "switch_radix: 16, sharp: true}\n");
  REQUIRE(fat.topology);
  CHECK(fat.topology->sharp(*fat.topology->find("leaf0")));
  CHECK(fat.topology->sharp(*fat.topology->find("spine0")));
  CHECK_FALSE(fat.topology->sharp(*fat.topology->find("n0.nvswitch0")));
  Loaded plain = load_text("topology: {builder: multi-node, nodes: 2}\n");
  REQUIRE(plain.topology);
  CHECK_FALSE(plain.topology->sharp(*plain.topology->find("netsw0")));
}

}  // namespace bubblesim
