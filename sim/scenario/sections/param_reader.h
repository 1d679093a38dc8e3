#pragma once
// Reading one declared parameter from YAML: a value of its ParamSpec's type, then its check. The
// schedules' generator parameters and the engine behaviours' scenario keys
// (component_settings.h) are read through it, so both give the same messages.

#include <optional>

#include "schedules/parameter.h"
#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

/// The value of `n` as `spec` says, or nullopt after reporting why not (wrong type, a choice not
/// allowed, a failed check) at `n`.
std::optional<ParamValue> read_param(const YamlNode& n, const ParamSpec& spec,
                                     DiagnosticList& diags);

}  // namespace bubblesim
