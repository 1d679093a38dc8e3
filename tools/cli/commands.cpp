#include "tools/cli/commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "schedules/table_csv.h"
#include "schedules/torch_csv.h"
#include "sim/engine/engine.h"
#include "tools/report/atomic_file.h"
#include "tools/report/chrome_trace_writer.h"
#include "tools/report/explain_report.h"
#include "tools/report/grid_renderer.h"
#include "tools/report/html_report.h"
#include "tools/report/json_report.h"
#include "tools/report/progress.h"
#include "tools/report/text_report.h"
#include "tools/report/text_table.h"
#include "tools/runner/explain.h"
#include "tools/runner/scenario_runner.h"
#include "tools/scenario/scenario_loader.h"

namespace bubblesim {
namespace {

void emit(const std::string& output, const std::string& content) {
  if (output.empty() || output == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
  } else {
    write_file_atomically(output, content);
  }
}

int exit_code_for(const ScenarioRun& result, bool allow_oom) {
  for (const ScheduleRun& r : result.runs) {
    if (r.simulation.status == RunStatus::OutOfMemory && allow_oom) continue;
    if (r.simulation.status != RunStatus::Ok) return 1;
  }
  return 0;
}

}  // namespace

int command_run(const Registry& registry, const RunOptions& options) {
  Scenario scenario = load_scenario_file(options.scenario, registry);
  scenario.max_ops = options.max_ops;
  scenario.threads = options.threads;
  for (const std::string& name : options.schedules) {
    if (registry.find(name) == nullptr)
      throw InputError("--schedule: " + registry.unknown_name_message(name));
    bool listed = false;
    for (const ScheduleRequest& r : scenario.schedules) listed = listed || r.name == name;
    if (!listed) {
      // Named on the command line but not in the file: run it with its defaults.
      ScheduleRequest request;
      request.name = name;
      request.params = ParamValues::defaults(registry.find(name)->info.params);
      request.where = SourceLocation{options.scenario, 0, 0};
      scenario.schedules.push_back(request);
    }
  }
  // Recorders for --trace and --html, one set per entry of result.runs.
  struct Recorders {
    std::unique_ptr<ChromeTraceWriter> trace;
    std::unique_ptr<MemoryTimeline> memory;  // --html without --trace
  };
  std::vector<Recorders> recorders;
  ScenarioRunHooks hooks;
  if (!options.trace.empty() || !options.html.empty()) {
    hooks.observers = [&](std::size_t index) {
      if (recorders.size() <= index) recorders.resize(index + 1);
      Recorders& r = recorders[index] = Recorders{};  // a skipped schedule's recorders are replaced
      std::vector<EngineObserver*> observers;
      if (!options.trace.empty()) {
        r.trace = std::make_unique<ChromeTraceWriter>(scenario.stages);
        observers.push_back(r.trace.get());
      } else {
        r.memory = std::make_unique<MemoryTimeline>(scenario.stages);
        observers.push_back(r.memory.get());
      }
      return observers;
    };
  }
  std::size_t schedule_count = 0;
  for (const ScheduleRequest& r : scenario.schedules) {
    if (options.schedules.empty() || std::find(options.schedules.begin(), options.schedules.end(),
                                               r.name) != options.schedules.end()) {
      ++schedule_count;
    }
  }
  // Progress only on a terminal: a line per schedule, with the optimizer's status while it
  // searches.
  ProgressReporter progress("run", schedule_count, stderr);
  hooks.on_schedule = [&](std::size_t, std::size_t, const ScheduleRequest& request) {
    progress.step(request.name);
  };
  hooks.on_progress = [&](const std::string& status) { progress.detail(status); };
  ScenarioRun result = run_scenario(scenario, registry, options.schedules, hooks);
  progress.finish();

  if (!options.trace.empty()) {
    const bool several = result.runs.size() > 1;
    std::vector<std::string> written;
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      const ScheduleRun& run = result.runs[i];
      TraceContext context;
      context.label = run.label;
      context.devices = run.table.devices;
      if (scenario.communication.kind == CommunicationKind::Topology) {
        context.topology = scenario.communication.topology.get();
        context.device_vertex = scenario.communication.placement;
      }
      std::string path =
          several ? trace_file_for_schedule(options.trace, run.label) : options.trace;
      // Two schedules whose labels sanitise alike get a numbered suffix.
      std::string unique = path;
      for (int n = 2; std::find(written.begin(), written.end(), unique) != written.end(); ++n) {
        unique = trace_file_for_schedule(options.trace, fmt::format("{}-{}", run.label, n));
      }
      write_file_atomically(unique, recorders[i].trace->to_json(context));
      written.push_back(unique);
    }
  }
  if (!options.html.empty()) {
    std::vector<const MemoryTimeline*> memory;
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      memory.push_back(recorders[i].trace ? &recorders[i].trace->memory()
                                          : recorders[i].memory.get());
    }
    write_file_atomically(options.html, render_html_report(scenario, result, memory));
  }

  std::string content;
  switch (options.format) {
    case ReportFormat::Text:
      content = scenario_report_text(scenario, result);
      break;
    case ReportFormat::Json:
      content = scenario_report_json(scenario, result).dump(2) + "\n";
      break;
    case ReportFormat::Csv:
      content = scenario_report_csv(scenario, result);
      break;
    case ReportFormat::Markdown:
      content = scenario_report_markdown(scenario, result);
      break;
  }
  emit(options.output, content);
  return exit_code_for(result, options.allow_oom);
}

int command_table(const Registry& registry, const TableOptions& options) {
  const std::string& scenario_path = options.scenario;
  const std::string& schedule = options.schedule;
  const std::string& output = options.output;
  Scenario scenario = load_scenario_file(scenario_path, registry);
  scenario.max_ops = options.max_ops;
  const Generator* generator = registry.find(schedule);
  if (generator == nullptr)
    throw InputError("--schedule: " + registry.unknown_name_message(schedule));
  ScheduleRequest request;
  request.name = schedule;
  request.where = SourceLocation{scenario_path, 0, 0};
  bool found = false;
  for (const ScheduleRequest& r : scenario.schedules) {
    if (r.name == schedule) {
      request = r;
      found = true;
      break;
    }
  }
  if (!found) request.params = ParamValues::defaults(generator->info.params);
  const ResolvedScenario resolved = resolve(scenario);
  Table table = generate_table(resolved, *generator, request);
  std::vector<StageCost> costs = resolved.costs.for_table(table.chunks);
  SimulationResult ideal = simulate(make_engine_input(resolved, table, costs, Replay::Idealized));
  if (options.format == "torch-csv") {
    try {
      emit(output, write_torch_csv(table, *torch_dialect_from_name(options.dialect)));
    } catch (const std::invalid_argument& e) {
      throw InputError(
          fmt::format("--format torch-csv: {} cannot be written as a PyTorch schedule file: {}",
                      schedule, e.what()));
    }
    return ideal.status == RunStatus::Ok ? 0 : 1;
  }
  if (options.format == "csv") {
    OpTimes times(ideal.timings.size());
    for (std::size_t d = 0; d < ideal.timings.size(); ++d) {
      for (const OpTiming& t : ideal.timings[d]) times[d].emplace_back(t.start, t.end);
    }
    emit(output, write_table_csv(table, times));
    return ideal.status == RunStatus::Ok ? 0 : 1;
  }
  std::string content = fmt::format(
      "{} on {} devices, {} stages, {} microbatches (idealized: scenario costs, no "
      "communication)\n",
      schedule, table.devices, table.stages, table.microbatches);
  content += render_grid(table, ideal);
  emit(output, content);
  return ideal.status == RunStatus::Ok ? 0 : 1;
}

int command_list(const Registry& registry) {
  TextTable t({"schedule", "placement", "origin", "description"});
  for (const std::string& name : registry.names()) {
    const Generator* g = registry.find(name);
    t.add_row({name, g->info.placement, registry.origin(name), g->info.description});
  }
  std::string out = t.render();
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int command_explain(const Registry& registry, const ExplainOptions& options) {
  const std::string& name = options.name;
  const Generator* g = registry.find(name);
  if (g == nullptr) throw InputError(registry.unknown_name_message(name));
  if (!options.scenario.empty()) {
    // The scenario form: run NAME and its baselines at the scenario (docs/optimizer.md, "Explain").
    Scenario scenario = load_scenario_file(options.scenario, registry);
    ScheduleExplanation explanation = explain_schedule(scenario, registry, name);
    emit("", options.format == "json"
                 ? explain_report_json(scenario, *g, explanation).dump(2) + "\n"
                 : explain_report_text(scenario, *g, explanation));
    return explanation.subject().run.simulation.status == RunStatus::Ok ? 0 : 1;
  }
  if (options.format != "text")
    throw InputError("--format json: needs a SCENARIO (explain NAME SCENARIO)");
  std::string out =
      fmt::format("{}: {}\n  placement: {}\n  source: {}\n  origin: {}\n", g->info.name,
                  g->info.description, g->info.placement, g->info.source, registry.origin(name));
  if (g->info.params.empty()) {
    out += "  parameters: none\n";
  } else {
    out += "  parameters:\n";
    for (const ParamSpec& p : g->info.params) {
      out += fmt::format("    {} ({}, default {}): {}\n", p.name, param_type_name(p.type),
                         p.optional_default ? std::string("derived") : to_string(p.default_value),
                         p.help);
      if (!p.choices.empty()) out += fmt::format("      one of: {}\n", fmt::join(p.choices, ", "));
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int command_validate(const Registry& registry, const std::string& scenario_path) {
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

void add_run_commands(CLI::App& app, CommandSet& commands) {
  struct Options {
    RunOptions run;
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  for (const char* name : {"run", "compare"}) {
    CLI::App* cmd = app.add_subcommand(
        name, std::string(name) == "run"
                  ? "run a scenario and report every schedule at three levels"
                  : "compare the scenario's schedules side by side (same as run)");
    cmd->add_option("scenario", options->run.scenario, "scenario YAML file")->required();
    cmd->add_option("--schedule", options->run.schedules, "run only this schedule (repeatable)");
    cmd->add_option("--format", options->format, "report format: text, json, csv or md (Markdown)")
        ->check(CLI::IsMember({"text", "json", "csv", "md"}));
    cmd->add_option("-o,--output", options->run.output,
                    "write the report to FILE (atomically) instead of stdout");
    cmd->add_flag("--allow-oom", options->run.allow_oom,
                  "report out_of_memory outcomes but exit 0 (by default they exit 1)");
    cmd->add_option("--trace", options->run.trace,
                    "write a Chrome trace (Perfetto) of each simulation replay to FILE; with "
                    "several schedules, "
                    "one file each, named FILE with the schedule label before the extension");
    cmd->add_option("--html", options->run.html,
                    "write a self-contained HTML report (timelines, memory, summary) to FILE");
    cmd->add_option("--max-ops", options->run.max_ops,
                    "refuse schedules whose table has more ops (default 50000000)")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
    cmd->add_option("--threads", options->run.threads,
                    "worker threads of the Monte Carlo samples of a scenario with variability "
                    "(default: every core; the report does not depend on it)")
        ->check(CLI::Range(1, 1024));
    commands.add(cmd, [options](CommandContext& context) {
      const std::string& f = options->format;
      options->run.format = f == "json"  ? ReportFormat::Json
                            : f == "csv" ? ReportFormat::Csv
                            : f == "md"  ? ReportFormat::Markdown
                                         : ReportFormat::Text;
      return command_run(context.registry, options->run);
    });
  }
}

void add_table_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<TableOptions>();
  CLI::App* cmd =
      app.add_subcommand("table", "print a schedule's device x time-slot grid or export its table");
  cmd->add_option("scenario", options->scenario, "scenario YAML file")->required();
  cmd->add_option("--schedule", options->schedule, "schedule name")->required();
  cmd->add_option("--format", options->format,
                  "grid (default), torch-csv (PyTorch per-rank CSV) or csv (bubblesim table CSV "
                  "with replay times)")
      ->check(CLI::IsMember({"grid", "torch-csv", "csv"}));
  cmd->add_option("--dialect", options->dialect, "torch-csv dialect: current (default) or 2024")
      ->check(CLI::IsMember({"current", "2024"}));
  cmd->add_option("-o,--output", options->output, "write to FILE instead of stdout");
  cmd->add_option("--max-ops", options->max_ops, "refuse a table with more ops (default 50000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  commands.add(cmd, [options](CommandContext& context) {
    return command_table(context.registry, *options);
  });
}

void add_catalog_commands(CLI::App& app, CommandSet& commands) {
  CLI::App* list = app.add_subcommand("list", "list the known schedules (built-in and plugins)");
  commands.add(list, [](CommandContext& context) { return command_list(context.registry); });

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
    return command_explain(context.registry, *explain_options);
  });

  auto scenario = std::make_shared<std::string>();
  CLI::App* validate =
      app.add_subcommand("validate", "check a scenario file and its schedules without running");
  validate->add_option("scenario", *scenario, "scenario YAML file")->required();
  commands.add(validate, [scenario](CommandContext& context) {
    return command_validate(context.registry, *scenario);
  });
}

}  // namespace bubblesim
