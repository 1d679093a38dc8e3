// The sweep fingerprint (sim/sweep/sweep_fingerprint.h): every file any point reads is part of
// it, at any number of axis values. A sweep over 5,001 topology files (the fingerprint used to
// load only the first 4,096 file-naming values) changes its fingerprint when the last one does.
#include "sim/sweep/sweep_fingerprint.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/sweep/sweep_spec.h"

namespace fs = std::filesystem;
using namespace bubblesim;

TEST_CASE("the fingerprint covers a file only the last of 5,001 axis values names") {
  const fs::path dir = fs::temp_directory_path() / "bubblesim_fingerprint_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string topology =
      "vertices: [{name: a, kind: gpu}, {name: b, kind: gpu}]\n"
      "links: [{between: [a, b], bandwidth: 50GB/s, latency: 1us}]\n";
  constexpr int kValues = 5001;
  std::string axis;
  for (int i = 0; i < kValues; ++i) {
    std::ofstream(dir / ("t" + std::to_string(i) + ".yaml")) << topology;
    axis += (i == 0 ? "" : ", ") + std::string("t") + std::to_string(i) + ".yaml";
  }
  std::ofstream(dir / "base.yaml")
      << "name: t\npipeline: {stages: 2, microbatches: 4}\n"
         "costs: {forward: 1ms, backward_input: 2ms, p2p_bytes: 1MB}\n"
         "communication: {model: topology}\ntopology: t0.yaml\nschedules: [1f1b]\n";
  std::ofstream(dir / "sweep.yaml") << "base: base.yaml\naxes:\n  topology: [" << axis << "]\n";
  const Registry registry = builtin_registry();
  const SweepSpec spec = load_sweep((dir / "sweep.yaml").string());
  const std::vector<std::string> inputs = sweep_point_inputs(spec, registry);
  const std::string last = (dir / ("t" + std::to_string(kValues - 1) + ".yaml")).string();
  CHECK(std::find(inputs.begin(), inputs.end(), fs::path(last).lexically_normal().string()) !=
        inputs.end());
  CHECK(inputs.size() >= static_cast<std::size_t>(kValues));
  const std::string before = sweep_fingerprint(spec, 1000, inputs);
  CHECK(sweep_fingerprint(spec, 1000, inputs) == before);  // deterministic
  std::ofstream(last, std::ios::app) << "# changed\n";
  CHECK(sweep_fingerprint(spec, 1000, sweep_point_inputs(spec, registry)) != before);
  fs::remove_all(dir);
}
