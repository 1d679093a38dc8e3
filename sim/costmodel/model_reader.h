#pragma once
// Reading `model:` and `cluster.gpu:` of a scenario, presets included (docs/models.md), and their
// resolved JSON. Every problem is a located diagnostic; a preset's values are defaults the
// scenario's keys override.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/costmodel/model_spec.h"
#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

/// The keys `model:` accepts.
const std::vector<std::string>& model_keys();

/// Reads `model:`; nullopt (with diagnostics) when a key is missing or wrong.
std::optional<TransformerModel> read_transformer_model(const YamlNode& node, DiagnosticList& diags);

/// Reads `cluster.gpu:`. `model` (when known) chooses the preset's peak for its dtype.
std::optional<GpuSpec> read_gpu_spec(const YamlNode& node, const TransformerModel* model,
                                     DiagnosticList& diags);

/// The resolved values (defaults filled) for the JSON report's `scenario.model` and
/// `scenario.cluster.gpu`; `parameters` is the model's total parameter count.
nlohmann::json transformer_model_json(const TransformerModel& model);
nlohmann::json gpu_spec_json(const GpuSpec& gpu);

}  // namespace bubblesim
