// Topology YAML forms and their defaults.
//
// General form:
//   {vertices: [{name: gpu0, kind: gpu}, ...],               kinds: gpu, host, pcie-switch, nic,
//   switch
//    links: [{between: [gpu0, gpu1], bandwidth: 10GB/s, latency: 50us}, ...]}   (links optional;
//    bandwidth and latency required, with units)
//   A gpu vertex may name its own NIC, `{name: gpu0, kind: gpu, nic: nic0}`: among equally short
//   routes the GPU's traffic takes the one through that NIC (Topology::set_nic,
//   docs/topologies.md).
//
// Builder form (every key but `builder` optional; defaults describe a DGX-H100-like node, see
// topologies/topology_builders.h and scenarios/topologies/dgx-h100.yaml for the sources). The
// builders are registered in topologies/builders/ (topology_builder_registry.h):
//   builder: single-node | multi-node | fat-tree | rail
//   gpus: 8                      single-node only; 1..65536
//   nodes: 2, gpus_per_node: 8   multi-node, fat-tree, rail; nodes x gpus_per_node <= 65536
//   nvlink: {bandwidth: 450GB/s, latency: 500ns}   each GPU to the node's NVSwitch
//   pcie:   {bandwidth: 64GB/s,  latency: 1us}     GPU/NIC to PCIe switch, PCIe switch to host
//   gpus_per_pcie_switch: 2      1..GPUs per node
//   nic:    {bandwidth: 400Gbps, latency: 2us}     NIC to its network switch (one NIC per GPU)
//   network: {latency: 1us}      one switch traversal (half on each link into/out of a switch)
//   switch_radix: 32             fat-tree only: ports per switch, even, 2..1024
//
// Either form: `ecmp: true` (default) spreads equal-cost routes whose choices are all network
// switches by a hash of their endpoints; false takes the lowest vertex id (Topology::set_ecmp).
//
// A string is a file name (relative to base_dir): a YAML file whose top-level key `topology:` holds
// either form, or a graph exported by a network tool, by its extension: GraphML (.graphml) or
// GraphViz DOT (.dot, .gv), read by topologies/formats/graph_file.h. The map form
//   {file: NAME.graphml, kind: switch, bandwidth: 100Gbps, latency: 1us, ecmp: true}
// gives a graph file the attributes its elements lack (every key but `file` optional).

#include "topologies/topology_loader.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "topologies/builders/topology_builder_registry.h"
#include "topologies/formats/graph_file.h"

namespace bubblesim {
namespace {

std::string list_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 12;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i)
    out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kShown) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

// A vertex's `nic: NAME`: the GPU's own NIC, the one its traffic leaves and enters through when
// routes tie (Topology::set_nic).
void set_own_nic(Topology& t, VertexId gpu, const YamlNode& nic_node,
                 const std::vector<std::string>& names, DiagnosticList& d) {
  auto nic_name = nic_node.as_string(d);
  if (!nic_name) return;
  if (t.vertex_kind(gpu) != VertexKind::Gpu) {
    nic_node.error(d, fmt::format("only a gpu vertex has a nic; '{}' is a {}", t.vertex_name(gpu),
                                  vertex_kind_name(t.vertex_kind(gpu))));
    return;
  }
  const std::optional<VertexId> nic = t.find(*nic_name);
  if (!nic) {
    std::string suggestion = closest_match(*nic_name, names);
    nic_node.error(
        d, fmt::format("unknown vertex '{}'{} (vertices: {})", *nic_name,
                       suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                       list_names(names)));
    return;
  }
  if (t.vertex_kind(*nic) != VertexKind::Nic) {
    nic_node.error(d, fmt::format("'{}' is a {}, not a nic", *nic_name,
                                  vertex_kind_name(t.vertex_kind(*nic))));
    return;
  }
  t.set_nic(gpu, *nic);
}

std::optional<Topology> load_general(const YamlNode& node, DiagnosticList& d) {
  const std::size_t errors_before = d.size();
  MapReader top(node, d, {"vertices", "links", "ecmp"});
  auto vertices = top.require("vertices");
  auto links = top.get("links");
  auto ecmp = top.get("ecmp");
  top.finish();

  Topology t;
  if (ecmp) {
    if (auto on = ecmp->as_boolean(d)) t.set_ecmp(*on);
  }
  std::vector<std::string> names;
  std::unordered_map<std::string, int> first_line;
  std::vector<std::pair<VertexId, YamlNode>> own_nics;  // read after every vertex is known
  if (vertices) {
    if (!vertices->is_sequence())
      vertices->error(d, fmt::format("expected a list of vertices, got {}", vertices->describe()));
    for (const YamlNode& v : vertices->elements()) {
      MapReader vr(v, d, {"name", "kind", "nic"});
      auto name_node = vr.require("name");
      auto name = name_node ? name_node->as_string(d) : std::nullopt;
      auto kind_node = vr.require("kind");
      auto kind = kind_node ? kind_node->as_choice(d, vertex_kind_names()) : std::nullopt;
      auto nic_node = vr.get("nic");
      vr.finish();
      if (!name || !kind) continue;
      if (name->empty()) {
        name_node->error(d, "a vertex name must not be empty");
        continue;
      }
      if (auto it = first_line.find(*name); it != first_line.end()) {
        name_node->error(d, fmt::format("duplicate vertex name '{}' (first given at line {})",
                                        *name, it->second));
        continue;
      }
      first_line.emplace(*name, name_node->location().line);
      names.push_back(*name);
      const VertexId id = t.add_vertex(*name, *vertex_kind_from_name(*kind));
      if (nic_node) own_nics.emplace_back(id, *nic_node);
    }
  }
  for (const auto& [gpu, nic_node] : own_nics) set_own_nic(t, gpu, nic_node, names, d);

  if (links) {
    if (!links->is_sequence())
      links->error(d, fmt::format("expected a list of links, got {}", links->describe()));
    for (const YamlNode& l : links->elements()) {
      MapReader lr(l, d, {"between", "bandwidth", "latency"});
      auto between = lr.require("between");
      auto bw_node = lr.require("bandwidth");
      auto bandwidth = bw_node ? bw_node->as_bandwidth(d) : std::nullopt;
      auto lat_node = lr.require("latency");
      auto latency = lat_node ? lat_node->as_time(d) : std::nullopt;
      lr.finish();
      if (!between) continue;
      std::vector<YamlNode> ends = between->elements();
      if (!between->is_sequence() || ends.size() != 2) {
        between->error(d,
                       fmt::format("expected a list of two vertex names, e.g. [gpu0, gpu1], got {}",
                                   between->is_sequence() ? fmt::format("{} names", ends.size())
                                                          : between->describe()));
        continue;
      }
      std::optional<VertexId> ids[2];
      for (std::size_t i = 0; i < 2; ++i) {
        auto name = ends[i].as_string(d);
        if (!name) continue;
        ids[i] = t.find(*name);
        if (!ids[i]) {
          std::string suggestion = closest_match(*name, names);
          ends[i].error(
              d,
              fmt::format("unknown vertex '{}'{} (vertices: {})", *name,
                          suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                          names.empty() ? "none" : list_names(names)));
        }
      }
      if (!ids[0] || !ids[1]) continue;
      if (*ids[0] == *ids[1]) {
        between->error(
            d, fmt::format("a link from '{}' to itself is not allowed", t.vertex_name(*ids[0])));
        continue;
      }
      if (!bandwidth || !latency) continue;
      t.add_link(*ids[0], *ids[1], *bandwidth, *latency);
    }
  }
  if (d.size() != errors_before) return std::nullopt;
  return t;
}

std::optional<Topology> load_builder(const YamlNode& node, DiagnosticList& d) {
  const TopologyBuilderRegistry& builders = builtin_topology_builders();
  auto name = node.child("builder").as_choice(d, builders.names());
  if (!name) return std::nullopt;
  const TopologyBuilder& builder = *builders.find(*name);
  std::vector<std::string> keys{"builder"};
  keys.insert(keys.end(), builder.keys.begin(), builder.keys.end());
  keys.emplace_back("ecmp");
  MapReader reader(node, d, keys);
  std::optional<bool> ecmp;
  if (!node.child("ecmp").is_null()) ecmp = node.child("ecmp").as_boolean(d);
  try {
    std::optional<Topology> t = builder.build(reader, d);
    if (t && ecmp) t->set_ecmp(*ecmp);
    return t;
  } catch (const std::invalid_argument& e) {
    node.error(d, e.what());  // the checks above should have caught it; say so rather than crash
    return std::nullopt;
  }
}

std::filesystem::path resolve_path(const std::string& name, const std::string& base_dir) {
  std::filesystem::path path(name);
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  return path;
}

// The map form of a graph file: `file` and the attributes its elements lack.
std::optional<Topology> load_graph_file_entry(const YamlNode& node, const std::string& base_dir,
                                              DiagnosticList& d) {
  MapReader reader(node, d, {"file", "kind", "bandwidth", "latency", "ecmp"});
  auto file_node = reader.require("file");
  auto file = file_node ? file_node->as_string(d) : std::nullopt;
  GraphFileDefaults defaults;
  if (auto kind = reader.get("kind")) defaults.kind = kind->as_choice(d, vertex_kind_names());
  defaults.bandwidth = reader.bandwidth("bandwidth");
  defaults.latency = reader.time("latency");
  const std::optional<bool> ecmp = reader.boolean("ecmp");
  reader.finish();
  if (!file) return std::nullopt;
  const std::optional<GraphFileFormat> format = graph_file_format(*file);
  if (!format) {
    file_node->error(d, fmt::format("'{}' is not a graph file: `file` takes a GraphML (.graphml) "
                                    "or GraphViz DOT (.dot, .gv) file; a YAML topology file is "
                                    "given as the topology itself (topology: NAME.yaml)",
                                    *file));
    return std::nullopt;
  }
  std::optional<Topology> t =
      load_graph_file(resolve_path(*file, base_dir).string(), *format, defaults, d);
  if (t && ecmp) t->set_ecmp(*ecmp);
  return t;
}

std::optional<Topology> load_inline(const YamlNode& node, const std::string& base_dir,
                                    DiagnosticList& d) {
  if (!node.is_map()) {
    node.error(
        d, fmt::format(
               "expected a topology (a mapping with vertices and links, or with builder), got {}",
               node.describe()));
    return std::nullopt;
  }
  if (!node.child("builder").is_null()) return load_builder(node, d);
  if (!node.child("file").is_null()) return load_graph_file_entry(node, base_dir, d);
  return load_general(node, d);
}

}  // namespace

std::optional<Topology> load_topology(const YamlNode& node, const std::string& base_dir,
                                      DiagnosticList& d) {
  if (!node.is_scalar() || node.is_null()) return load_inline(node, base_dir, d);

  const std::filesystem::path path = resolve_path(node.raw().Scalar(), base_dir);
  if (const std::optional<GraphFileFormat> format = graph_file_format(path.string()))
    return load_graph_file(path.string(), *format, GraphFileDefaults{}, d);
  const std::size_t errors_before = d.size();
  YamlDocument doc = YamlDocument::load_file(path.string(), d);
  if (!doc.ok()) {
    if (d.size() == errors_before)
      node.error(d, fmt::format("cannot read topology file '{}'", path.string()));
    return std::nullopt;
  }
  MapReader top(doc.root(), d, {"topology"});
  auto inner = top.require("topology");
  top.finish();
  if (!inner) return std::nullopt;
  if (inner->is_scalar() && !inner->is_null()) {
    inner->error(d, "a topology file must hold the topology itself, not the name of another file");
    return std::nullopt;
  }
  if (!inner->child("file").is_null()) {
    inner->error(d, "a topology file must hold the topology itself, not name a graph file");
    return std::nullopt;
  }
  auto t = load_inline(*inner, base_dir, d);
  if (d.size() != errors_before) return std::nullopt;
  return t;
}

}  // namespace bubblesim
