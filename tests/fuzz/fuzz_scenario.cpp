// Fuzz target: the scenario loader on arbitrary YAML text. Every input must either load or be
// refused with InputError; anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "schedules/builtin_generators.h"
#include "schedules/registry.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bubblesim::Registry registry = bubblesim::builtin_registry();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Relative topology files resolve against a folder that holds none: file reads fail cleanly.
    (void)bubblesim::load_scenario_string(text, "fuzz.yaml", "/nonexistent-fuzz-dir", registry);
  } catch (const bubblesim::InputError&) {
  } catch (const bubblesim::OverflowError&) {
  }
  return 0;
}
