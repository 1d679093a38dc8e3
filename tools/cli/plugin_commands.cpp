// Plugin loading for every command, and `check-plugin`: the generator contract for a plugin author.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "tools/cli/command_set.h"
#include "tools/runner/generator_contract.h"

namespace bubblesim {
namespace {

constexpr std::size_t kFailuresShown = 20;  // per generator; the count of the rest is printed

int command_check_plugin(CommandContext& context, const std::string& path) {
  const LoadedPlugin& plugin = context.plugins.load(path, context.registry);
  fmt::print("plugin {}: {} version {} (built against bubblesim {}), {} generator(s)\n",
             plugin.path, plugin.name, plugin.version, plugin.bubblesim_version,
             plugin.generators.size());
  const ContractGrid grid;
  std::size_t total_failures = 0;
  for (const std::string& name : plugin.generators) {
    ContractStats stats;
    std::vector<ContractFailure> failures =
        check_generator_contract(*context.registry.find(name), grid, &stats);
    total_failures += failures.size();
    fmt::print(
        "{}: {} ({} inputs accepted, {} rejected as not fitting)\n", name,
        failures.empty() ? "contract ok" : fmt::format("{} contract failure(s)", failures.size()),
        stats.accepted, stats.rejected);
    for (std::size_t i = 0; i < failures.size() && i < kFailuresShown; ++i) {
      fmt::print("  FAIL {}\n", to_string(failures[i]));
    }
    if (failures.size() > kFailuresShown)
      fmt::print("  ... and {} more\n", failures.size() - kFailuresShown);
  }
  return total_failures == 0 ? 0 : 1;
}

}  // namespace

void load_plugins(CommandContext& context) {
  if (const char* dirs = std::getenv(kPluginPathVariable); dirs != nullptr) {
    context.plugins.load_directories(dirs, context.registry);
  }
  for (const std::string& path : context.plugin_paths) context.plugins.load(path, context.registry);
}

void add_plugin_commands(CLI::App& app, CommandSet& commands) {
  auto path = std::make_shared<std::string>();
  CLI::App* check = app.add_subcommand(
      "check-plugin",
      "load a plugin and run the generator contract on its generators (exit 1 if any fails)");
  check->add_option("path", *path, "plugin shared library (.so)")->required();
  commands.add(check,
               [path](CommandContext& context) { return command_check_plugin(context, *path); });
}

}  // namespace bubblesim
