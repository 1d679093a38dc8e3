// Fuzz target: the sweep file loader. load_sweep reads a path, so each input is written to a
// private temporary folder next to a fixed base scenario (base.yaml); what loads is expanded for
// its first and last point.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/sweep/sweep_spec.h"
#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"

namespace {

const char* kBase = R"(name: base
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 1ms, backward: 2ms}
schedules: [gpipe, 1f1b]
)";

void write(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

const std::string& folder() {
  static const std::string dir = [] {
    std::string pattern = "/tmp/bubblesim-fuzz-sweep-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    std::string d = made != nullptr ? std::string(made) : std::string("/tmp");
    write(d + "/base.yaml", kBase);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = folder() + "/sweep.yaml";
  write(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    // A small point bound: the fuzzer must not spend its time enumerating huge sweeps.
    bubblesim::SweepSpec spec = bubblesim::load_sweep(path, 100'000);
    if (spec.point_count() > 0) {
      (void)spec.scenario_yaml(0);
      (void)spec.scenario_yaml(spec.point_count() - 1);
    }
  } catch (const bubblesim::InputError&) {
  } catch (const bubblesim::OverflowError&) {
  }
  return 0;
}
