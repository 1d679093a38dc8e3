#pragma once
// Shared by the scenario tests that run whole scenarios: files of the checkout, the built-in
// registry, and the run of one schedule by name.

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim::scenario_test {

/// A file of the checkout, e.g. source("scenarios/parallel/dp_ring.yaml").
inline std::string source(const std::string& rel) {
  return std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel;
}

/// The built-in generators, built once.
inline const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

/// The run of schedule `name` (fails the test when it did not run).
inline const ScheduleRun& run_named(const ScenarioRun& run, const std::string& name) {
  for (const ScheduleRun& r : run.runs) {
    if (r.schedule == name) return r;
  }
  FAIL("schedule not run: " << name);
  return run.runs.front();
}

/// The first result's collectives of a JSON report (scenario_report_json), by name.
inline std::map<std::string, nlohmann::json> collectives_by_name(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& c : report["results"][0]["simulation"]["collectives"])
    out[c["name"].get<std::string>()] = c;
  return out;
}

/// A number of a JSON object.
inline double number(const nlohmann::json& j, const char* key) { return j.at(key).get<double>(); }

}  // namespace bubblesim::scenario_test
