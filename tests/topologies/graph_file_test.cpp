// Topologies from GraphML and GraphViz DOT files (topologies/formats/graph_file.h): the same
// cluster written in either format loads into the same vertices, links and routes as its YAML
// general form; attributes a file lacks come from the scenario; every problem names the file, the
// line of the element and the attribute.

#include "topologies/formats/graph_file.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/units/quantity_parser.h"
#include "topologies/topology_components.h"
#include "topologies/topology_loader.h"

namespace bubblesim {
namespace {

const std::string kDataDir = std::string(BUBBLESIM_SOURCE_DIR) + "/tests/topologies/data";

struct Loaded {
  std::optional<Topology> topology;
  std::string errors;
};

Loaded load_yaml(const std::string& text) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, "t.yaml", d);
  REQUIRE(doc.ok());
  Loaded out;
  out.topology = load_topology(doc.root().child("topology"), kDataDir, d);
  for (const Diagnostic& diag : d.items())
    out.errors += (out.errors.empty() ? "" : "\n") + diag.render();
  return out;
}

// A file written for one test case, removed at the end of it.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

Loaded load_file(const TempFile& f, const std::string& extra_keys = "") {
  return load_yaml("topology: {file: " + f.path + extra_keys + "}\n");
}

// Every link as "a->b bandwidth latency", in link order, and every GPU with its NIC.
std::string describe(const Topology& t) {
  std::string out;
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    out += fmt::format("{} {}", t.vertex_name(v), vertex_kind_name(t.vertex_kind(v)));
    if (auto nic = t.nic_of(v)) out += " nic " + t.vertex_name(*nic);
    out += "\n";
  }
  std::vector<std::string> links;
  for (LinkId l = 0; l < t.link_count(); ++l)
    links.push_back(fmt::format("{} {} {}", t.link_name(l), t.link_bandwidth(l).bytes_per_second(),
                                t.link_latency(l).ps()));
  std::sort(links.begin(), links.end());
  for (const std::string& l : links) out += l + "\n";
  return out;
}

const char* kTwoNodesYaml = R"(
topology:
  vertices:
    - {name: gpu0, kind: gpu, nic: nic0}
    - {name: gpu1, kind: gpu, nic: nic1}
    - {name: gpu2, kind: gpu, nic: nic2}
    - {name: gpu3, kind: gpu, nic: nic3}
    - {name: nvswitch0, kind: switch}
    - {name: nvswitch1, kind: switch}
    - {name: nic0, kind: nic}
    - {name: nic1, kind: nic}
    - {name: nic2, kind: nic}
    - {name: nic3, kind: nic}
    - {name: leaf, kind: switch}
  links:
    - {between: [gpu0, nvswitch0], bandwidth: 450GB/s, latency: 500ns}
    - {between: [gpu1, nvswitch0], bandwidth: 450GB/s, latency: 500ns}
    - {between: [gpu2, nvswitch1], bandwidth: 450GB/s, latency: 500ns}
    - {between: [gpu3, nvswitch1], bandwidth: 450GB/s, latency: 500ns}
    - {between: [gpu0, nic0], bandwidth: 64GB/s, latency: 1us}
    - {between: [gpu1, nic1], bandwidth: 64GB/s, latency: 1us}
    - {between: [gpu2, nic2], bandwidth: 64GB/s, latency: 1us}
    - {between: [gpu3, nic3], bandwidth: 64GB/s, latency: 1us}
    - {between: [nic0, leaf], bandwidth: 400Gbps, latency: 2us}
    - {between: [nic1, leaf], bandwidth: 400Gbps, latency: 2us}
    - {between: [nic2, leaf], bandwidth: 400Gbps, latency: 2us}
    - {between: [nic3, leaf], bandwidth: 400Gbps, latency: 2us}
)";

TEST_CASE("the same cluster from GraphML, DOT and YAML: same vertices, links and routes") {
  const Loaded yaml = load_yaml(kTwoNodesYaml);
  REQUIRE_MESSAGE(yaml.topology, yaml.errors);
  const Loaded graphml = load_yaml("topology: two_nodes.graphml\n");
  REQUIRE_MESSAGE(graphml.topology, graphml.errors);
  const Loaded dot = load_yaml("topology: two_nodes.dot\n");
  REQUIRE_MESSAGE(dot.topology, dot.errors);
  const std::string expected = describe(*yaml.topology);
  CHECK(describe(*graphml.topology) == expected);
  // The DOT file writes each link in both directions; each pair is one full-duplex link.
  CHECK(describe(*dot.topology) == expected);
  CHECK(dot.topology->link_count() == 24);
  for (const Loaded* l : {&graphml, &dot}) {
    const Topology& t = *l->topology;
    CHECK(t.gpus().size() == 4);
    const auto route = t.route(*t.find("gpu1"), *t.find("gpu2"));
    REQUIRE(route);
    std::string names;
    for (LinkId id : route->links) names += t.link_name(id) + " ";
    CHECK(names == "gpu1->nic1 nic1->leaf leaf->nic2 nic2->gpu2 ");
  }
}

TEST_CASE("attributes a file lacks come from the scenario: an Internet Topology Zoo file") {
  // The Topology Zoo writes LinkSpeedRaw (bits per second) and no kinds or latencies.
  TempFile f("bubblesim_zoo.graphml", R"(<?xml version="1.0"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d1"/>
  <key attr.name="label" attr.type="string" for="node" id="d0"/>
  <graph edgedefault="undirected">
    <node id="0"><data key="d0">Seattle</data></node>
    <node id="1"><data key="d0">Denver</data></node>
    <edge source="0" target="1"><data key="d1">10000000000.0</data></edge>
  </graph>
</graphml>
)");
  const Loaded l = load_file(f, ", kind: gpu, latency: 5ms");
  REQUIRE_MESSAGE(l.topology, l.errors);
  CHECK(l.topology->gpus().size() == 2);
  CHECK(l.topology->link_bandwidth(0).bytes_per_second() == doctest::Approx(1.25e9));  // 10 Gb/s
  CHECK(l.topology->link_latency(0) == parse_time("5ms"));
  // Without the defaults each missing attribute is named at its element.
  const Loaded bare = load_file(f);
  CHECK(bare.errors.find(f.path + ":6:5: error: topology.vertex '0'.kind: missing") !=
        std::string::npos);
  CHECK(bare.errors.find(f.path + ":8:5: error: topology.edge '0' -- '1'.latency: missing") !=
        std::string::npos);
}

TEST_CASE("problems name the file, the element's line, the attribute and what is allowed") {
  TempFile f("bubblesim_bad.graphml", R"(<graphml>
  <key id="k" for="node" attr.name="kind"/>
  <key id="b" for="edge" attr.name="bandwidth"/>
  <graph edgedefault="undirected">
    <node id="a"><data key="k">gpux</data></node>
    <node id="b"><data key="k">gpu</data></node>
    <edge source="a" target="c"><data key="b">1GB/s</data></edge>
    <edge source="a" target="b"><data key="b">fast</data></edge>
  </graph>
</graphml>
)");
  const Loaded l = load_file(f, ", latency: 1us");
  CHECK_FALSE(l.topology);
  CHECK(l.errors.find(f.path +
                      ":5:5: error: topology.vertex 'a'.kind: 'gpux' is not a vertex kind; did "
                      "you mean 'gpu'? (allowed: gpu, host, pcie-switch, nic, switch)") !=
        std::string::npos);
  CHECK(l.errors.find(f.path + ":7:5: error: topology.edge 'a' -- 'c': unknown vertex 'c'") !=
        std::string::npos);
  CHECK(l.errors.find(f.path + ":8:5: error: topology.edge 'a' -- 'b'.bandwidth:") !=
        std::string::npos);

  TempFile broken("bubblesim_broken.graphml", "<graphml>\n<graph>\n<node id='a'>\n</graph>\n");
  const Loaded b = load_file(broken);
  CHECK(b.errors.find(broken.path +
                      ":5:1: error: topology: not well-formed XML: unexpected end of data") !=
        std::string::npos);

  TempFile dot("bubblesim_broken.dot", "graph g {\n  a -- ;\n}\n");
  const Loaded d = load_file(dot);
  CHECK(d.errors.find(dot.path + ": error: topology: not a readable GraphViz DOT graph") !=
        std::string::npos);

  TempFile mismatch("bubblesim_mismatch.dot",
                    "digraph g {\n  node [kind=gpu];\n  a -> b [bandwidth=\"1GB/s\"];\n"
                    "  b -> a [bandwidth=\"2GB/s\"];\n}\n");
  const Loaded m = load_file(mismatch, ", latency: 1us");
  CHECK(m.errors.find(mismatch.path +
                      ":4:3: error: topology.edge 'b' -> 'a': differs from its reverse edge at "
                      "line 3") != std::string::npos);

  const Loaded yaml_file = load_yaml("topology: {file: two_nodes.yaml}\n");
  CHECK(yaml_file.errors.find("is not a graph file") != std::string::npos);
}

TEST_CASE("connected components number vertices by their lowest id") {
  const Loaded l = load_yaml(R"(
topology:
  vertices:
    - {name: a, kind: gpu}
    - {name: b, kind: gpu}
    - {name: c, kind: gpu}
    - {name: d, kind: switch}
  links:
    - {between: [a, d], bandwidth: 1GB/s, latency: 1us}
    - {between: [b, c], bandwidth: 1GB/s, latency: 1us}
)");
  REQUIRE_MESSAGE(l.topology, l.errors);
  CHECK(connected_components(*l.topology) == std::vector<std::int32_t>{0, 1, 1, 0});
}

}  // namespace
}  // namespace bubblesim
