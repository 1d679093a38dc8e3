#pragma once
// Reading `model.moe:` and `model.mla:` (docs/moe.md) over a preset's: keys the scenario gives
// win, the rest are the preset's; `moe: none` / `mla: none` drop a preset's.

#include <nlohmann/json.hpp>
#include <optional>

#include "sim/costmodel/model_spec.h"
#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

/// `user` / `preset`: the scenario's and the preset's node (either may be absent). False (with
/// diagnostics) when a value is wrong; `out` is left empty when neither gives one.
bool read_moe(const std::optional<YamlNode>& user, const std::optional<YamlNode>& preset,
              DiagnosticList& diags, std::optional<MoeSpec>& out);
bool read_mla(const std::optional<YamlNode>& user, const std::optional<YamlNode>& preset,
              DiagnosticList& diags, std::optional<MlaSpec>& out);

nlohmann::json moe_json(const MoeSpec& moe);
nlohmann::json mla_json(const MlaSpec& mla);

}  // namespace bubblesim
