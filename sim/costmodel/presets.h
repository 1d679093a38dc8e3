#pragma once
// Model, GPU and framework presets (`model: {preset: NAME}`, `cluster.gpu: {preset: NAME}`,
// `model.framework: NAME`): the data files scenarios/presets/models.yaml, gpus.yaml and
// frameworks.yaml, compiled into the binary so presets work wherever bubblesim runs. Every value
// there names its source.

#include <optional>
#include <string>
#include <vector>

#include "sim/units/yaml_reader.h"

namespace bubblesim {

class Presets {
 public:
  /// The presets shipped with bubblesim (parsed once; a broken data file is an internal error).
  static const Presets& builtin();

  /// The preset's mapping, or nullopt when there is no such preset.
  std::optional<YamlNode> model(const std::string& name) const;
  std::optional<YamlNode> gpu(const std::string& name) const;
  std::optional<YamlNode> framework(const std::string& name) const;
  /// Names in file order.
  const std::vector<std::string>& model_names() const { return model_names_; }
  const std::vector<std::string>& gpu_names() const { return gpu_names_; }
  const std::vector<std::string>& framework_names() const { return framework_names_; }

 private:
  Presets();
  // Filled while models_, gpus_, frameworks_ are parsed.
  std::vector<std::string> model_names_, gpu_names_, framework_names_;
  YamlNode models_, gpus_, frameworks_;
};

enum class PresetKind { Model, Gpu, Framework };

/// The preset of `kind` that the scalar `name_node` names (when the name is unknown: a diagnostic
/// listing the known ones, `ok` false and nullopt). `name` receives the name.
std::optional<YamlNode> named_preset(const YamlNode& name_node, PresetKind kind,
                                     DiagnosticList& diags, bool& ok, std::string& name);

/// The preset named by the `preset:` key of mapping `node`, whose keys are `keys` (nullopt when
/// absent; else as named_preset).
std::optional<YamlNode> preset_of(const YamlNode& node, const std::vector<std::string>& keys,
                                  PresetKind kind, DiagnosticList& diags, bool& ok,
                                  std::string& name);

/// `bubblesim list --presets`: every preset with its values and sources.
std::string presets_text();

}  // namespace bubblesim
