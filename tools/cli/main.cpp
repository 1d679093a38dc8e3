// bubblesim: the command-line tool. Parses arguments, dispatches to a command, and is the only
// place that turns errors into exit codes: 0 ok, 1 simulated failure, 2 bad input, 3 internal.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"
#include "tools/cli/commands.h"

int main(int argc, char** argv) {
  using namespace bubblesim;
  CLI::App app{"bubblesim: simulate pipeline-parallel training schedules on modeled clusters"};
  app.set_version_flag("--version", std::string("bubblesim ") + BUBBLESIM_VERSION);
  app.require_subcommand(1);

  RunOptions run_options;
  std::string format = "text";
  auto add_run_like = [&](CLI::App* cmd) {
    cmd->add_option("scenario", run_options.scenario, "scenario YAML file")->required();
    cmd->add_option("--schedule", run_options.schedules, "run only this schedule (repeatable)");
    cmd->add_option("--format", format, "report format")->check(CLI::IsMember({"text", "json", "csv"}));
    cmd->add_option("-o,--output", run_options.output, "write the report to FILE (atomically) instead of stdout");
  };
  CLI::App* run = app.add_subcommand("run", "run a scenario and report every schedule at three levels");
  add_run_like(run);
  CLI::App* compare = app.add_subcommand("compare", "compare the scenario's schedules side by side (as run)");
  add_run_like(compare);

  std::string table_scenario, table_schedule, table_output;
  CLI::App* table = app.add_subcommand("table", "print a schedule's device x time-slot grid");
  table->add_option("scenario", table_scenario, "scenario YAML file")->required();
  table->add_option("--schedule", table_schedule, "schedule name")->required();
  table->add_option("-o,--output", table_output, "write to FILE instead of stdout");

  CLI::App* list = app.add_subcommand("list", "list the known schedules");
  std::string explain_name;
  CLI::App* explain = app.add_subcommand("explain", "describe a schedule and its parameters");
  explain->add_option("name", explain_name, "schedule name")->required();
  std::string validate_scenario;
  CLI::App* validate = app.add_subcommand("validate", "check a scenario file and its schedules without running");
  validate->add_option("scenario", validate_scenario, "scenario YAML file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    Registry registry = Registry::with_builtins();
    run_options.format = format == "json" ? ReportFormat::Json : format == "csv" ? ReportFormat::Csv : ReportFormat::Text;
    if (*run || *compare) return command_run(registry, run_options);
    if (*table) return command_table(registry, table_scenario, table_schedule, table_output);
    if (*list) return command_list(registry);
    if (*explain) return command_explain(registry, explain_name);
    if (*validate) return command_validate(registry, validate_scenario);
  } catch (const InputError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const OverflowError& e) {
    fmt::print(stderr, "error: {} (the simulated time or memory does not fit in 64 bits)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
