#pragma once
// A chain of GPUs in the general topology form, as a scenario (the 10^5-vertex chain is
// about 10 MB of YAML): shared by resolve_test (route estimates at p = 2000) and routing_bench
// (TopologyLoad).

#include <cstdint>
#include <string>

namespace bubblesim::scenario_test {

/// `vertices` GPUs v0..v(n-1) linked in a row at 50 GB/s and 1 us, p = `stages` on the first of
/// them, `microbatches` microbatches of explicit costs, 1F1B.
inline std::string chain_scenario_yaml(std::int64_t vertices, std::int64_t stages,
                                       std::int64_t microbatches) {
  std::string yaml = "name: chain\npipeline: {stages: " + std::to_string(stages) +
                     ", microbatches: " + std::to_string(microbatches) +
                     "}\n"
                     "costs: {forward: 1ms, backward_input: 1ms, p2p_bytes: 8MiB}\n"
                     "communication: {model: topology}\ntopology:\n  vertices:\n";
  for (std::int64_t v = 0; v < vertices; ++v)
    yaml += "    - {name: v" + std::to_string(v) + ", kind: gpu}\n";
  yaml += "  links:\n";
  for (std::int64_t v = 1; v < vertices; ++v) {
    yaml += "    - {between: [v" + std::to_string(v - 1) + ", v" + std::to_string(v) +
            "], bandwidth: 50GB/s, latency: 1us}\n";
  }
  return yaml + "schedules: [1f1b]\n";
}

}  // namespace bubblesim::scenario_test
