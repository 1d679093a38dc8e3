#include "sim/scenario/scenario_loader.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "sim/scenario/sections/section_reader.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

Scenario load(const YamlDocument& doc, const Registry& registry, const std::string& base_dir,
              DiagnosticList& diags) {
  Scenario sc;
  sc.labels.file = doc.root().file();
  if (doc.ok()) {
    std::vector<std::string> keys;
    for (const SectionReader& reader : section_readers())
      keys.insert(keys.end(), reader.keys.begin(), reader.keys.end());
    const YamlNode root = doc.root();
    MapReader top(root, diags, keys);
    if (root.is_map()) {
      LoadContext context(diags, registry, base_dir, root, top);
      for (const SectionReader& reader : section_readers()) reader.read(context, sc);
    }
  }
  if (!diags.empty()) {
    // In file order, like a compiler (the readers find some problems only when a map is done).
    std::vector<Diagnostic> items = diags.items();
    std::stable_sort(items.begin(), items.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    throw InputError(std::move(items));
  }
  return sc;
}

}  // namespace

std::string scenario_base_dir(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Scenario load_scenario_file(const std::string& path, const Registry& registry) {
  DiagnosticList diags;
  YamlDocument doc = YamlDocument::load_file(path, diags, /*allow_stream=*/true);
  Scenario sc = load(doc, registry, scenario_base_dir(path), diags);
  sc.labels.file = path;
  return sc;
}

Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const Registry& registry) {
  return load_scenario_string(yaml, name, ".", registry);
}

Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const std::string& base_dir, const Registry& registry) {
  DiagnosticList diags;
  YamlDocument doc = YamlDocument::load_string(yaml, name, diags);
  Scenario sc = load(doc, registry, base_dir, diags);
  sc.labels.file = name;
  return sc;
}

}  // namespace bubblesim
