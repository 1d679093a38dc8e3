#pragma once
// Shared by the scenario section tests: a small registry of fake generators, a two-stage base
// scenario, and load() / errors() that load YAML text named "s.yaml".

#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

namespace bubblesim::scenario_test {

inline Generator fake_generator(const std::string& name, std::vector<ParamSpec> params) {
  Generator g;
  g.info.name = name;
  g.info.description = "test";
  g.info.params = std::move(params);
  g.generate = [](const GeneratorInput&) { return Table{}; };
  return g;
}

/// gpipe and 1f1b without parameters, and "interleaved" with one parameter of every type.
inline const Registry& test_registry() {
  static const Registry registry = [] {
    Registry r;
    r.add(fake_generator("gpipe", {}));
    r.add(fake_generator("1f1b", {}));
    ParamSpec delay{"slack", ParamType::Duration, Time::zero(), "extra time", {}, {}, false};
    ParamSpec ratio{"ratio", ParamType::Real, 0.5, "a ratio", {}, {}, false};
    r.add(fake_generator(
        "interleaved",
        {integer_param("chunks", 2, "chunks per device", 1),
         optional_integer_param("group", "group size", 1), boolean_param("eager", false, "eager"),
         choice_param("order", "depth-first", {"depth-first", "breadth-first"}, "order"), delay,
         ratio}));
    return r;
  }();
  return registry;
}

inline const std::string kBase = "name: t\npipeline: {stages: 2, microbatches: 4}\n";
inline const std::string kCosts = "costs: {forward: 1ms, backward_input: 2ms}\n";
/// Three GPUs in a line and a host beside gpu0 (lines 4-6 after kBase + kCosts).
inline const std::string kTopology =
    "topology:\n"
    "  vertices: [{name: gpu0, kind: gpu}, {name: gpu1, kind: gpu}, {name: gpu2, kind: gpu}, "
    "{name: host0, kind: host}]\n"
    "  links: [{between: [gpu0, gpu1], bandwidth: 10GB/s, latency: 50us}, "
    "{between: [gpu1, gpu2], bandwidth: 10GB/s, latency: 50us}, "
    "{between: [gpu0, host0], bandwidth: 32GB/s, latency: 2us}]\n";

/// The rendered diagnostics of loading `yaml`, or {} when it loads.
inline std::vector<std::string> errors(const std::string& yaml,
                                       const Registry& registry = test_registry()) {
  try {
    load_scenario_string(yaml, "s.yaml", registry);
  } catch (const InputError& e) {
    std::vector<std::string> out;
    for (const Diagnostic& d : e.diagnostics()) out.push_back(d.render());
    return out;
  }
  return {};
}

inline Scenario load(const std::string& yaml, const Registry& registry = test_registry()) {
  return load_scenario_string(yaml, "s.yaml", registry);
}

}  // namespace bubblesim::scenario_test
