#pragma once
// LoadContext: what every section reader of a scenario file shares (section_reader.h): the
// diagnostics being collected, the folder relative paths are resolved against, the registry the
// schedules are checked against, and the top-level mapping (every section's node, read or not).

#include <optional>
#include <string>

#include "schedules/registry.h"
#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

class LoadContext {
 public:
  LoadContext(DiagnosticList& diags, const Registry& registry, std::string base_dir,
              const YamlNode& root, MapReader& top)
      : diags_(diags),
        registry_(registry),
        base_dir_(std::move(base_dir)),
        root_(root),
        top_(top) {}

  DiagnosticList& diags() { return diags_; }
  const Registry& registry() const { return registry_; }
  /// The folder relative file names inside the scenario are resolved against.
  const std::string& base_dir() const { return base_dir_; }
  /// The document's root (for errors about a missing section).
  const YamlNode& root() const { return root_; }

  /// The node of top-level key `key`, if present (any reader may look at any section's node).
  std::optional<YamlNode> section(const std::string& key) { return top_.get(key); }
  /// Like section(), reporting a missing key.
  std::optional<YamlNode> require_section(const std::string& key) { return top_.require(key); }

 private:
  DiagnosticList& diags_;
  const Registry& registry_;
  std::string base_dir_;
  YamlNode root_;
  MapReader& top_;
};

}  // namespace bubblesim
