#pragma once
// A scenario value given once for every pipeline stage or as a list with one entry per stage
// (`costs.forward: 1ms` or `[1ms, 2ms]`), as the costs and memory sections read them.

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

template <typename T>
struct PerStage {
  std::vector<T> values;  // p entries (or the list as given when p is unknown)
  YamlNode node;
};

/// Reads `key` of `m` as a scalar (every stage) or a list of length p. `p` = 0: the pipeline size
/// is unknown (already reported), so the length is not checked. `read` reads one element.
/// nullopt when absent or invalid (reported).
template <typename T, typename Read>
std::optional<PerStage<T>> read_per_stage(MapReader& m, const std::string& key, std::int32_t p,
                                          DiagnosticList& d, Read read) {
  std::optional<YamlNode> n = m.get(key);
  if (!n) return std::nullopt;
  PerStage<T> out{{}, *n};
  if (n->is_sequence()) {
    std::vector<YamlNode> elements = n->elements();
    if (p > 0 && elements.size() != static_cast<std::size_t>(p)) {
      n->error(d, fmt::format("expected a single value or a list of {} values (one per pipeline "
                              "stage), got {} values",
                              p, elements.size()));
      return std::nullopt;
    }
    bool ok = true;
    for (const YamlNode& e : elements) {
      std::optional<T> v = read(e);
      if (v) out.values.push_back(*v);
      ok = ok && v.has_value();
    }
    if (!ok) return std::nullopt;
    return out;
  }
  if (n->is_map()) {
    n->error(d,
             "expected a single value or a list with one value per pipeline stage, got a mapping");
    return std::nullopt;
  }
  std::optional<T> v = read(*n);
  if (!v) return std::nullopt;
  out.values.assign(p > 0 ? static_cast<std::size_t>(p) : 1, *v);
  return out;
}

}  // namespace bubblesim
