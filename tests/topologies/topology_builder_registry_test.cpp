// The topology builder registry (topologies/builders/): every registered builder builds with its
// defaults through the YAML `builder:` form and declares the keys it reads; names are unique.
#include "topologies/builders/topology_builder_registry.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "topologies/topology_loader.h"

namespace bubblesim {
namespace {

std::optional<Topology> load_text(const std::string& text, std::string& errors) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, "t.yaml", d);
  REQUIRE(doc.ok());
  MapReader top(doc.root(), d, {"topology"});
  auto node = top.require("topology");
  top.finish();
  REQUIRE(node);
  std::optional<Topology> t = load_topology(*node, ".", d);
  for (const Diagnostic& diag : d.items()) errors += diag.render() + "\n";
  return t;
}

}  // namespace

TEST_CASE("the built-in topology builders, in order") {
  CHECK(builtin_topology_builders().names() ==
        std::vector<std::string>{"single-node", "multi-node", "fat-tree", "rail"});
}

TEST_CASE("every registered builder builds with its defaults and names its keys in errors") {
  const TopologyBuilderRegistry& builders = builtin_topology_builders();
  for (const std::string& name : builders.names()) {
    CAPTURE(name);
    const TopologyBuilder* builder = builders.find(name);
    REQUIRE(builder != nullptr);
    CHECK_FALSE(builder->description.empty());
    std::string errors;
    std::optional<Topology> t = load_text("topology: {builder: " + name + "}\n", errors);
    CHECK(errors.empty());
    REQUIRE(t.has_value());
    CHECK(!t->gpus().empty());
    errors.clear();
    CHECK_FALSE(load_text("topology: {builder: " + name + ", colour: red}\n", errors));
    std::string allowed = "builder";
    for (const std::string& key : builder->keys) allowed += ", " + key;
    allowed += ", ecmp";  // every form
    CHECK(errors.find("(allowed: " + allowed + ")") != std::string::npos);
  }
}

TEST_CASE("a builder name is registered once and needs a build function") {
  TopologyBuilderRegistry registry;
  auto build = [](MapReader&, DiagnosticList&) -> std::optional<Topology> { return Topology{}; };
  registry.add(TopologyBuilder{"ring", "a ring", {}, build});
  CHECK(registry.find("ring") != nullptr);
  CHECK(registry.find("torus") == nullptr);
  CHECK_THROWS_AS(registry.add(TopologyBuilder{"ring", "again", {}, build}), std::invalid_argument);
  CHECK_THROWS_AS(registry.add(TopologyBuilder{"torus", "no build", {}, {}}),
                  std::invalid_argument);
}

}  // namespace bubblesim
