#pragma once
// Loading a scenario YAML file into a validated Scenario: one section reader per top-level key
// (sections/section_reader.h lists them and says how to add one), all sharing a LoadContext.
//
// Every problem of the file is collected (unknown and duplicate keys, missing units, wrong types,
// values out of range, unknown schedules and parameters, placement errors) and thrown once as an
// InputError whose diagnostics name file:line:column and the key path. Keys, defaults and the
// transformer formulas are documented in README.md and transformer_costs.h.

#include <string>

#include "schedules/registry.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

/// Reads and validates `path`; relative topology files are resolved against its directory.
/// Throws InputError listing every problem.
Scenario load_scenario_file(const std::string& path, const Registry& registry);

/// Same for YAML text; `name` is used as the file name in diagnostics and in Scenario::file, and
/// relative topology files are resolved against the current directory.
Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const Registry& registry);

/// Same, resolving relative paths against `base_dir` (used by sweeps, which edit a scenario's YAML
/// tree and load the result as if it were the base file).
Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const std::string& base_dir, const Registry& registry);

/// The directory relative paths inside the scenario file are resolved against ("." for a bare
/// file name).
std::string scenario_base_dir(const std::string& path);

}  // namespace bubblesim
