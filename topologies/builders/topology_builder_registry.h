#pragma once
// The `builder:` form of a topology (topology_loader.h): a registry of named builders, each one
// file in this folder that reads its keys and builds a Topology, the way generators register
// with the schedule Registry. Adding a builder: write `void
// register_NAME(TopologyBuilderRegistry&)` in NAME_builder.cpp and add one line to
// builtin_topology_builders.cpp.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology.h"

namespace bubblesim {

struct TopologyBuilder {
  std::string name;         // the value of `builder:`, e.g. "fat-tree"
  std::string description;  // one line, for documentation and errors
  /// The keys it reads beside `builder`, in the order error messages list them.
  std::vector<std::string> keys;
  /// Reads the keys from `reader` (a MapReader over the topology mapping that allows exactly
  /// `builder` and `keys`) and builds the topology. Problems go to `d` (nullopt then); it may
  /// throw std::invalid_argument for a parameter the reading did not catch.
  std::function<std::optional<Topology>(MapReader& reader, DiagnosticList& d)> build;
};

class TopologyBuilderRegistry {
 public:
  /// Throws std::invalid_argument when the name is taken or the builder has no build function.
  void add(TopologyBuilder builder);
  const TopologyBuilder* find(const std::string& name) const;
  /// Names in registration order.
  std::vector<std::string> names() const;

 private:
  std::vector<TopologyBuilder> builders_;
  std::map<std::string, std::size_t> index_;
};

/// Every built-in builder: single-node, multi-node, fat-tree, rail. Built once; immutable.
const TopologyBuilderRegistry& builtin_topology_builders();

}  // namespace bubblesim
