#pragma once
// A bundled or test scenario loaded and run with the built-in generators, for report tests.
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

namespace bubblesim::testing {

struct Ran {
  Scenario scenario;
  ScenarioRun result;
};

/// `rel`: a path under the source folder.
inline Ran run_source_scenario(const std::string& rel) {
  const Registry registry = builtin_registry();
  Ran r;
  r.scenario = load_scenario_file(std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel, registry);
  r.result = run_scenario(r.scenario, registry);
  return r;
}

}  // namespace bubblesim::testing
