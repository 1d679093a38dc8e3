#pragma once
// What a GraphML or DOT reader hands to the topology builder of graph_file.cpp: the vertices and
// edges of the file in file order, each with the attributes bubblesim reads (as written, not yet
// checked) and where it stands in the file. Internal to topologies/formats.

#include <map>
#include <string>
#include <vector>

#include "sim/units/diagnostics.h"

namespace bubblesim::graph_file {

/// The attributes a reader keeps; the others (coordinates, labels, colours) are ignored.
inline constexpr const char* kKindAttribute = "kind";
inline constexpr const char* kNicAttribute = "nic";
inline constexpr const char* kBandwidthAttribute = "bandwidth";
inline constexpr const char* kLatencyAttribute = "latency";
/// The Internet Topology Zoo's link speed in bits per second (a number).
inline constexpr const char* kZooSpeedAttribute = "LinkSpeedRaw";

using Attributes = std::map<std::string, std::string>;

struct Vertex {
  std::string id;
  Attributes attributes;
  SourceLocation where;
};

struct Edge {
  std::string source, target;
  Attributes attributes;
  SourceLocation where;
};

struct Elements {
  bool directed = false;
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;
};

/// Each reader adds its syntax problems to `d` and returns what it read (possibly partial).
Elements read_graphml(const std::string& text, const std::string& file, DiagnosticList& d);
Elements read_dot(const std::string& text, const std::string& file, DiagnosticList& d);

}  // namespace bubblesim::graph_file
