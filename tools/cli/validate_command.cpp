// `bubblesim validate SCENARIO`: check a scenario file and generate and validate its tables
// without running them.
#include <fmt/format.h>

#include <memory>

#include "tools/cli/command_set.h"
#include "tools/runner/resolve.h"
#include "tools/runner/scenario_runner.h"
#include "tools/scenario/scenario_loader.h"

namespace bubblesim {
namespace {

int validate_command(const Registry& registry, const std::string& scenario_path) {
  Scenario scenario = load_scenario_file(scenario_path, registry);
  const ResolvedScenario resolved = resolve(scenario);
  // Generate and validate every table too: a schedule that does not fit is bad input.
  for (const ScheduleRequest& request : scenario.schedules) {
    const Generator* g = registry.find(request.name);
    if (g != nullptr && !request.defaulted) generate_table(resolved, *g, request);
  }
  fmt::print("{}: ok ({} schedules)\n", scenario_path, scenario.schedules.size());
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandSet& commands) {
  auto scenario = std::make_shared<std::string>();
  CLI::App* validate =
      app.add_subcommand("validate", "check a scenario file and its schedules without running");
  validate->add_option("scenario", *scenario, "scenario YAML file")->required();
  commands.add(validate, [scenario](CommandContext& context) {
    return validate_command(context.registry, *scenario);
  });
}

}  // namespace bubblesim
