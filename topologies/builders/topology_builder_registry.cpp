#include "topologies/builders/topology_builder_registry.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bubblesim {

void TopologyBuilderRegistry::add(TopologyBuilder builder) {
  if (builder.name.empty()) throw std::invalid_argument("a topology builder needs a name");
  if (!builder.build) {
    throw std::invalid_argument(
        fmt::format("topology builder '{}' has no build function", builder.name));
  }
  if (index_.count(builder.name) != 0) {
    throw std::invalid_argument(
        fmt::format("a topology builder named '{}' is already registered", builder.name));
  }
  index_.emplace(builder.name, builders_.size());
  builders_.push_back(std::move(builder));
}

const TopologyBuilder* TopologyBuilderRegistry::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &builders_[it->second];
}

std::vector<std::string> TopologyBuilderRegistry::names() const {
  std::vector<std::string> out;
  for (const TopologyBuilder& b : builders_) out.push_back(b.name);
  return out;
}

}  // namespace bubblesim
