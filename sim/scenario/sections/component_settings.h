#pragma once
// The scenario keys the engine's behaviours declare (sim/engine/component_kind.h), read in the
// section they belong to: `communication.p2p` is a key of the blocking sends, read where the
// communication reader reads its own keys. A section reader adds component_keys(SECTION) to the
// keys its mapping allows and calls read_component_settings with it; the values go into
// Scenario::communication.behaviours (by full key, whichever section reads them), which resolve()
// hands to the engine unchanged (EngineInput::behaviours).
// A behaviour with keys in a section whose reader does not call these yet adds that call there.

#include <string>
#include <string_view>
#include <vector>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

struct Scenario;

/// The keys the built-in behaviours declare in `section`, without the section ("p2p"), in their
/// registration order.
std::vector<std::string> component_keys(std::string_view section);

/// Reads those keys from `reader` (the section's mapping) into `sc.communication.behaviours`, then
/// the check of each behaviour that declares one of them; every problem is reported at its key.
void read_component_settings(std::string_view section, MapReader& reader, DiagnosticList& diags,
                             Scenario& sc);

}  // namespace bubblesim
