#pragma once
// Model and GPU presets (`model: {preset: NAME}`, `cluster.gpu: {preset: NAME}`): the data files
// scenarios/presets/models.yaml and gpus.yaml, compiled into the binary so presets work wherever
// bubblesim runs. Every value there names its source.

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
  /// Names in file order.
  const std::vector<std::string>& model_names() const { return model_names_; }
  const std::vector<std::string>& gpu_names() const { return gpu_names_; }

 private:
  Presets();
  std::vector<std::string> model_names_, gpu_names_;  // filled while models_, gpus_ are parsed
  YamlNode models_, gpus_;
};

/// `bubblesim list --presets`: every preset with its values and sources.
std::string presets_text();

}  // namespace bubblesim
