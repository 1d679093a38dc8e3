// `bubblesim validate SCENARIO`: check a scenario file and generate and validate its tables
// without running them. Infeasible schedules are reported as `run` reports them (exit 1); costs
// derived from `model:` are printed per stage.
#include <fmt/format.h>

#include <memory>

#include "sim/report/report_rows.h"
#include "sim/report/text_table.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/runner/table_costs.h"
#include "sim/scenario/scenario_loader.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

int validate_command(const Registry& registry, const std::string& scenario_path) {
  Scenario scenario = load_scenario_file(scenario_path, registry);
  const ResolvedScenario resolved = resolve(scenario);
  // Generate and validate every table too: an invalid table is bad input; a schedule that cannot
  // be generated within its constraints is reported as infeasible (exit 1), as `run` does.
  std::vector<std::string> infeasible;
  for (const ScheduleRequest& request : scenario.schedules) {
    const Generator* g = registry.find(request.name);
    if (g == nullptr || request.defaulted) continue;
    try {
      // A chunk count the model cannot be built with is refused as `run` refuses it.
      table_costs(resolved, generate_table(resolved, *g, request).chunks, request);
    } catch (const InfeasibleScheduleError& e) {
      infeasible.emplace_back(e.what());
    }
  }
  if (!infeasible.empty()) {
    for (const std::string& line : infeasible) fmt::print("{}\n", line);
    fmt::print("{}: {} of {} schedules infeasible\n", scenario_path, infeasible.size(),
               scenario.schedules.size());
    return 1;
  }
  fmt::print("{}: ok ({} schedules)\n", scenario_path, scenario.schedules.size());
  if (resolved.model_costs) {
    const ReportRows costs = stage_cost_rows(resolved);
    TextTable table(costs.header);
    for (const auto& row : costs.rows) table.add_row(row);
    fmt::print("per-GPU stage costs derived from the model:\n{}", table.render(text_width()));
  }
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
