// Fuzz target: the topology loader on a YAML string (general form or builder form), then the
// routes between every pair of GPUs of what loaded (bounded to a few GPUs to keep runs fast).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"
#include "sim/units/yaml_reader.h"
#include "topologies/topology_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    bubblesim::DiagnosticList diags;
    bubblesim::YamlDocument doc = bubblesim::YamlDocument::load_string(text, "fuzz.yaml", diags);
    if (!doc.ok()) return 0;
    // A topology file's form (`topology: {...}`) is accepted as well as the bare node.
    bubblesim::YamlNode node = doc.root();
    if (node.is_map() && node.raw()["topology"].IsDefined()) node = node.child("topology");
    std::optional<bubblesim::Topology> topo =
        bubblesim::load_topology(node, "/nonexistent-fuzz-dir", diags);
    if (!topo) return 0;
    const auto gpus = topo->gpus();
    const std::size_t n = std::min<std::size_t>(gpus.size(), 4);
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        if (a != b) (void)topo->route(gpus[a], gpus[b]);
      }
    }
  } catch (const bubblesim::InputError&) {
  } catch (const bubblesim::OverflowError&) {
  }
  return 0;
}
