// `bubblesim explain NAME [SCENARIO]`: a schedule's description and parameters; with a scenario,
// the schedule run there, its memory decisions and its bubble against the baselines.
#include <memory>

#include "sim/report/catalog_report.h"
#include "sim/report/explain_report.h"
#include "sim/report/text_table.h"
#include "sim/runner/explain.h"
#include "sim/scenario/scenario_loader.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

/// `explain NAME [SCENARIO]`: without a scenario, the schedule and its parameters; with one, the
/// schedule run at the scenario, its memory decisions and a comparison with the baselines.
struct ExplainOptions {
  std::string name;
  std::string scenario;         // "" = the plain description
  std::string format = "text";  // text | json (scenario form only)
};

int explain_command(const Registry& registry, const ExplainOptions& options) {
  const std::string& name = options.name;
  const Generator* g = registry.find(name);
  if (g == nullptr) throw InputError(registry.unknown_name_message(name));
  if (!options.scenario.empty()) {
    // The scenario form: run NAME and its baselines at the scenario (docs/optimizer.md, "Explain").
    Scenario scenario = load_scenario_file(options.scenario, registry);
    ScheduleExplanation explanation = explain_schedule(scenario, registry, name);
    emit("", options.format == "json"
                 ? explain_report_json(scenario, *g, explanation).dump(2) + "\n"
                 : explain_report_text(scenario, *g, explanation, text_width()));
    return explanation.subject().run.simulation.status == RunStatus::Ok ? 0 : 1;
  }
  if (options.format != "text")
    throw InputError("--format json: needs a SCENARIO (explain NAME SCENARIO)");
  emit("", fit_lines(schedule_description_text(registry, name), text_width()));
  return 0;
}

}  // namespace

void add_explain_command(CLI::App& app, CommandSet& commands) {
  auto explain_options = std::make_shared<ExplainOptions>();
  CLI::App* explain = app.add_subcommand("explain",
                                         "describe a schedule and its parameters; with SCENARIO, "
                                         "run it there: memory decisions and the "
                                         "bubble against the baselines at the same memory budget");
  explain->add_option("name", explain_options->name, "schedule name")->required();
  explain->add_option("scenario", explain_options->scenario,
                      "scenario YAML file: run the schedule there and compare it with the "
                      "scenario's other schedules "
                      "and 1f1b, zb-h1, zb-h2");
  explain->add_option("--format", explain_options->format, "with SCENARIO: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  commands.add(explain, [explain_options](CommandContext& context) {
    return explain_command(context.registry, *explain_options);
  });
}

}  // namespace bubblesim
