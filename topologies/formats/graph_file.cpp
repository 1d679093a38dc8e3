#include "topologies/formats/graph_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "sim/units/quantity_parser.h"
#include "sim/units/text_file.h"
#include "topologies/formats/graph_elements.h"

namespace bubblesim {
namespace {

using graph_file::Attributes;

// The largest bandwidth any quantity accepts (parse_bandwidth: 1 EB/s).
constexpr double kMaxBytesPerSecond = 1e18;

std::string key_of(const std::string& element, const char* attribute) {
  return fmt::format("topology.{}.{}", element, attribute);
}

// One link's bandwidth: `bandwidth` with units, else the Topology Zoo's LinkSpeedRaw (bits per
// second), else the scenario's default.
std::optional<Bandwidth> edge_bandwidth(const Attributes& a, const std::string& element,
                                        const SourceLocation& where,
                                        const GraphFileDefaults& defaults, DiagnosticList& d) {
  if (auto it = a.find(graph_file::kBandwidthAttribute); it != a.end()) {
    try {
      return parse_bandwidth(it->second);
    } catch (const QuantityError& e) {
      d.add(where, key_of(element, graph_file::kBandwidthAttribute), e.what());
      return std::nullopt;
    }
  }
  if (auto it = a.find(graph_file::kZooSpeedAttribute); it != a.end()) {
    char* end = nullptr;
    const double bits = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || !std::isfinite(bits) || bits <= 0 ||
        bits / 8.0 > kMaxBytesPerSecond) {
      d.add(where, key_of(element, graph_file::kZooSpeedAttribute),
            fmt::format("'{}' is not a number of bits per second in (0, 8e18]", it->second));
      return std::nullopt;
    }
    return Bandwidth::bytes_per_second(bits / 8.0);
  }
  if (defaults.bandwidth) return defaults.bandwidth;
  d.add(where, key_of(element, graph_file::kBandwidthAttribute),
        "missing: give the edge a bandwidth attribute with units (e.g. \"400Gbps\") or "
        "LinkSpeedRaw in bits per second, or every edge one as `topology.bandwidth`");
  return std::nullopt;
}

std::optional<Time> edge_latency(const Attributes& a, const std::string& element,
                                 const SourceLocation& where, const GraphFileDefaults& defaults,
                                 DiagnosticList& d) {
  if (auto it = a.find(graph_file::kLatencyAttribute); it != a.end()) {
    try {
      return parse_time(it->second);
    } catch (const QuantityError& e) {
      d.add(where, key_of(element, graph_file::kLatencyAttribute), e.what());
      return std::nullopt;
    }
  }
  if (defaults.latency) return defaults.latency;
  d.add(where, key_of(element, graph_file::kLatencyAttribute),
        "missing: give the edge a latency attribute with units (e.g. \"2us\"), or every edge one "
        "as `topology.latency`");
  return std::nullopt;
}

void add_vertices(const graph_file::Elements& g, const GraphFileDefaults& defaults, Topology& t,
                  DiagnosticList& d) {
  std::unordered_map<std::string, SourceLocation> first;
  for (const graph_file::Vertex& v : g.vertices) {
    const std::string element = fmt::format("vertex '{}'", v.id);
    if (v.id.empty()) {
      d.add(v.where, "topology", "a vertex without an id");
      continue;
    }
    if (auto it = first.find(v.id); it != first.end()) {
      d.add(v.where, "topology",
            fmt::format("duplicate vertex id '{}' (first at line {})", v.id, it->second.line));
      continue;
    }
    first.emplace(v.id, v.where);
    std::optional<std::string> kind = defaults.kind;
    if (auto it = v.attributes.find(graph_file::kKindAttribute); it != v.attributes.end())
      kind = it->second;
    if (!kind) {
      d.add(v.where, key_of(element, graph_file::kKindAttribute),
            fmt::format("missing: give the vertex a kind attribute ({}), or every vertex one as "
                        "`topology.kind`",
                        fmt::join(vertex_kind_names(), ", ")));
      continue;
    }
    const std::optional<VertexKind> k = vertex_kind_from_name(*kind);
    if (!k) {
      const std::string suggestion = closest_match(*kind, vertex_kind_names());
      d.add(v.where, key_of(element, graph_file::kKindAttribute),
            fmt::format("'{}' is not a vertex kind{} (allowed: {})", *kind,
                        suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                        fmt::join(vertex_kind_names(), ", ")));
      continue;
    }
    t.add_vertex(v.id, *k);
  }
}

void pair_nics(const graph_file::Elements& g, Topology& t, DiagnosticList& d) {
  for (const graph_file::Vertex& v : g.vertices) {
    auto it = v.attributes.find(graph_file::kNicAttribute);
    const std::optional<VertexId> self = t.find(v.id);
    if (it == v.attributes.end() || !self) continue;
    const std::string key = key_of(fmt::format("vertex '{}'", v.id), graph_file::kNicAttribute);
    const std::optional<VertexId> nic = t.find(it->second);
    if (t.vertex_kind(*self) != VertexKind::Gpu)
      d.add(v.where, key,
            fmt::format("only a gpu vertex has a nic; '{}' is a {}", v.id,
                        vertex_kind_name(t.vertex_kind(*self))));
    else if (!nic)
      d.add(v.where, key, fmt::format("unknown vertex '{}'", it->second));
    else if (t.vertex_kind(*nic) != VertexKind::Nic)
      d.add(v.where, key,
            fmt::format("'{}' is a {}, not a nic", it->second,
                        vertex_kind_name(t.vertex_kind(*nic))));
    else
      t.set_nic(*self, *nic);
  }
}

// Links are full duplex: in a directed file, an edge and its reverse are one link (they must
// agree), and an edge without a reverse is a link too.
void add_links(const graph_file::Elements& g, const GraphFileDefaults& defaults, Topology& t,
               DiagnosticList& d) {
  struct Seen {
    Bandwidth bandwidth;
    Time latency;
    SourceLocation where;
  };
  std::map<std::pair<VertexId, VertexId>, Seen> reverse_of;
  for (const graph_file::Edge& e : g.edges) {
    const std::string element =
        fmt::format("edge '{}' {} '{}'", e.source, g.directed ? "->" : "--", e.target);
    const std::optional<VertexId> a = t.find(e.source), b = t.find(e.target);
    bool ends_known = true;
    for (const auto& [name, id] : {std::pair{&e.source, a}, std::pair{&e.target, b}}) {
      if (!id) {
        d.add(e.where, "topology." + element, fmt::format("unknown vertex '{}'", *name));
        ends_known = false;
      }
    }
    const auto bandwidth = edge_bandwidth(e.attributes, element, e.where, defaults, d);
    const auto latency = edge_latency(e.attributes, element, e.where, defaults, d);
    if (!ends_known || !bandwidth || !latency) continue;
    if (*a == *b) {
      d.add(e.where, "topology." + element,
            fmt::format("a link from '{}' to itself is not allowed", e.source));
      continue;
    }
    if (g.directed) {
      if (auto it = reverse_of.find({*b, *a}); it != reverse_of.end()) {
        if (it->second.bandwidth != *bandwidth || it->second.latency != *latency)
          d.add(e.where, "topology." + element,
                fmt::format("differs from its reverse edge at line {}: a link is full duplex, "
                            "both directions have one bandwidth and latency",
                            it->second.where.line));
        reverse_of.erase(it);
        continue;
      }
      reverse_of.emplace(std::pair{*a, *b}, Seen{*bandwidth, *latency, e.where});
    }
    t.add_link(*a, *b, *bandwidth, *latency);
  }
}

}  // namespace

std::optional<GraphFileFormat> graph_file_format(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".graphml") return GraphFileFormat::GraphMl;
  if (ext == ".dot" || ext == ".gv") return GraphFileFormat::Dot;
  return std::nullopt;
}

std::optional<Topology> load_graph_file(const std::string& path, GraphFileFormat format,
                                        const GraphFileDefaults& defaults, DiagnosticList& d) {
  std::string text;
  if (auto problem = read_input_file(path, text)) {
    d.add({path, 0, 0}, "topology", *problem);
    return std::nullopt;
  }
  const std::size_t errors_before = d.size();
  const graph_file::Elements g = format == GraphFileFormat::GraphMl
                                     ? graph_file::read_graphml(text, path, d)
                                     : graph_file::read_dot(text, path, d);
  if (d.size() != errors_before) return std::nullopt;
  Topology t;
  add_vertices(g, defaults, t, d);
  pair_nics(g, t, d);
  add_links(g, defaults, t, d);
  if (d.size() != errors_before) return std::nullopt;
  if (t.gpus().empty()) {
    d.add({path, 0, 0}, "topology",
          "the graph has no vertex of kind gpu: bubblesim places the pipeline's ranks on them");
    return std::nullopt;
  }
  return t;
}

}  // namespace bubblesim
