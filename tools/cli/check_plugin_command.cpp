// `bubblesim check-plugin PATH`: load a plugin and run the generator contract on its generators,
// the check a plugin author runs (exit 1 when any generator fails it).
#include <cstdio>
#include <memory>

#include "sim/report/contract_report.h"
#include "sim/runner/generator_contract.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

int check_plugin_command(CommandContext& context, const std::string& path) {
  const LoadedPlugin& plugin = context.plugins.load(path, context.registry);
  const ContractGrid grid;
  std::vector<GeneratorContractResult> results;
  bool failed = false;
  for (const std::string& name : plugin.generators) {
    GeneratorContractResult r;
    r.name = name;
    r.failures = check_generator_contract(*context.registry.find(name), grid, &r.stats);
    failed = failed || !r.failures.empty();
    results.push_back(std::move(r));
  }
  emit("", plugin_check_text(plugin, results));
  return failed ? 1 : 0;
}

}  // namespace

void add_check_plugin_command(CLI::App& app, CommandSet& commands) {
  auto path = std::make_shared<std::string>();
  CLI::App* check = app.add_subcommand(
      "check-plugin",
      "load a plugin and run the generator contract on its generators (exit 1 if any fails)");
  check->add_option("path", *path, "plugin shared library (.so)")->required();
  commands.add(check,
               [path](CommandContext& context) { return check_plugin_command(context, *path); });
}

}  // namespace bubblesim
