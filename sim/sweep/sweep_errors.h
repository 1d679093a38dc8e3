#pragma once
// Locating a sweep point's input errors where the user can fix them: an error on a key that an
// axis sets points at that axis's value in the sweep file; an error on another key points at the
// key in the base scenario (the point's YAML text is generated and has other line numbers).

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "sim/sweep/sweep_spec.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {

/// `error` (from loading the scenario of `point`) with its diagnostics relocated as above.
InputError locate_point_error(const SweepSpec& spec, std::int64_t point, const InputError& error);

/// The node of `root` at a diagnostic's key path (dotted keys and [i] indices), or the deepest
/// one of the path that exists; `root` is never modified.
YAML::Node node_at_key_path(const YAML::Node& root, const std::string& key_path);

/// `d` pointing at its key in `root` (parsed from `file`), when that key is there; else as it was.
Diagnostic located_in_tree(Diagnostic d, const YAML::Node& root, const std::string& file);

}  // namespace bubblesim
