#include "sim/report/contract_report.h"

#include <fmt/format.h>

namespace bubblesim {

std::string plugin_check_text(const LoadedPlugin& plugin,
                              const std::vector<GeneratorContractResult>& results,
                              std::size_t failures_shown) {
  std::string out = fmt::format(
      "plugin {}: {} version {} (built against bubblesim {}), {} generator(s)\n", plugin.path,
      plugin.name, plugin.version, plugin.bubblesim_version, plugin.generators.size());
  for (const GeneratorContractResult& r : results) {
    out +=
        fmt::format("{}: {} ({} inputs accepted, {} rejected as not fitting)\n", r.name,
                    r.failures.empty() ? "contract ok"
                                       : fmt::format("{} contract failure(s)", r.failures.size()),
                    r.stats.accepted, r.stats.rejected);
    for (std::size_t i = 0; i < r.failures.size() && i < failures_shown; ++i)
      out += fmt::format("  FAIL {}\n", to_string(r.failures[i]));
    if (r.failures.size() > failures_shown)
      out += fmt::format("  ... and {} more\n", r.failures.size() - failures_shown);
  }
  return out;
}

}  // namespace bubblesim
