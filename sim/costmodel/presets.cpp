#include "sim/costmodel/presets.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string_view>

namespace bubblesim {

extern const std::string_view kModelPresetsYaml;
extern const std::string_view kGpuPresetsYaml;
extern const std::string_view kFrameworkPresetsYaml;

namespace {

YamlNode parse(std::string_view text, const std::string& name, std::vector<std::string>& names) {
  DiagnosticList diags;
  YamlDocument doc = YamlDocument::load_string(std::string(text), name, diags);
  const YamlNode root = doc.root();
  if (!doc.ok() || !root.is_map()) {
    throw std::logic_error(fmt::format("the built-in presets file {} does not parse", name));
  }
  for (const auto& entry : root.raw()) names.push_back(entry.first.as<std::string>());
  return root;
}

std::optional<YamlNode> find(const YamlNode& root, const std::vector<std::string>& names,
                             const std::string& name) {
  for (const std::string& n : names) {
    if (n == name) return root.child(name);
  }
  return std::nullopt;
}

std::string scalar_or_map(const YamlNode& n) {
  if (n.is_scalar()) return n.describe();
  if (n.is_sequence()) {
    std::string out;
    for (const YamlNode& e : n.elements()) out += (out.empty() ? "" : ", ") + scalar_or_map(e);
    return "[" + out + "]";
  }
  std::string out;
  for (const auto& e : n.raw()) {
    const YamlNode child = n.child(e.first.as<std::string>());
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", e.first.as<std::string>(),
                       scalar_or_map(child));
  }
  return "{" + out + "}";
}

}  // namespace

Presets::Presets()
    : models_(parse(kModelPresetsYaml, "scenarios/presets/models.yaml", model_names_)),
      gpus_(parse(kGpuPresetsYaml, "scenarios/presets/gpus.yaml", gpu_names_)),
      frameworks_(
          parse(kFrameworkPresetsYaml, "scenarios/presets/frameworks.yaml", framework_names_)) {}

const Presets& Presets::builtin() {
  static const Presets presets;
  return presets;
}

std::optional<YamlNode> Presets::model(const std::string& name) const {
  return find(models_, model_names_, name);
}

std::optional<YamlNode> Presets::gpu(const std::string& name) const {
  return find(gpus_, gpu_names_, name);
}

std::optional<YamlNode> Presets::framework(const std::string& name) const {
  return find(frameworks_, framework_names_, name);
}

namespace {

/// A preset with `sources`: its values, then the source of each.
std::string sourced_preset_text(const YamlNode& node) {
  std::string out;
  for (const auto& e : node.raw()) {
    const std::string key = e.first.as<std::string>();
    if (key == "sources") continue;
    out += fmt::format("    {}: {}\n", key, scalar_or_map(node.child(key)));
  }
  const YamlNode sources = node.child("sources");
  for (const auto& e : sources.raw()) {
    const std::string key = e.first.as<std::string>();
    out += fmt::format("    source of {}: {}\n", key, sources.child(key).describe());
  }
  return out;
}

}  // namespace

std::optional<YamlNode> named_preset(const YamlNode& name_node, PresetKind kind,
                                     DiagnosticList& diags, bool& ok, std::string& name) {
  const Presets& p = Presets::builtin();
  const std::vector<std::string>& names = kind == PresetKind::Model ? p.model_names()
                                          : kind == PresetKind::Gpu ? p.gpu_names()
                                                                    : p.framework_names();
  std::optional<std::string> s = name_node.as_choice(diags, names);
  if (!s) {
    ok = false;
    return std::nullopt;
  }
  name = *s;
  return kind == PresetKind::Model ? p.model(*s)
         : kind == PresetKind::Gpu ? p.gpu(*s)
                                   : p.framework(*s);
}

std::optional<YamlNode> preset_of(const YamlNode& node, const std::vector<std::string>& keys,
                                  PresetKind kind, DiagnosticList& diags, bool& ok,
                                  std::string& name) {
  MapReader map(node, diags, keys);  // reads `preset` alone: the caller reads the rest
  std::optional<YamlNode> key = map.get("preset");
  if (!key) return std::nullopt;
  return named_preset(*key, kind, diags, ok, name);
}

std::string presets_text() {
  const Presets& p = Presets::builtin();
  std::string out =
      "model presets (model: {preset: NAME, ...overrides}; scenarios/presets/models.yaml):\n";
  for (const std::string& name : p.model_names()) {
    const YamlNode node = *p.model(name);
    std::string values;
    for (const auto& e : node.raw()) {
      const std::string key = e.first.as<std::string>();
      if (key == "source") continue;
      values +=
          fmt::format("{}{}: {}", values.empty() ? "" : ", ", key, scalar_or_map(node.child(key)));
    }
    out += fmt::format("  {}\n    {}\n    source: {}\n", name, values,
                       node.child("source").describe());
  }
  out +=
      "\nGPU presets (cluster: {gpu: {preset: NAME, ...overrides}}; "
      "scenarios/presets/gpus.yaml):\n";
  for (const std::string& name : p.gpu_names())
    out += fmt::format("  {}\n{}", name, sourced_preset_text(*p.gpu(name)));
  out +=
      "\nframework presets (model: {framework: NAME} or {framework: {preset: NAME, "
      "host_launch: DURATION}}; scenarios/presets/frameworks.yaml):\n";
  for (const std::string& name : p.framework_names())
    out += fmt::format("  {}\n{}", name, sourced_preset_text(*p.framework(name)));
  return out;
}

}  // namespace bubblesim
