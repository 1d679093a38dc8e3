// `bubblesim run SCENARIO` and `bubblesim compare SCENARIO`: run a scenario's schedules and report
// them, the verdict first (sim/report/verdict.h), with optional Chrome traces and an HTML report.
// Exit 1 when a schedule failed (out of memory, deadlock, infeasible) unless --fail-on none.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "sim/report/atomic_file.h"
#include "sim/report/chrome_trace_writer.h"
#include "sim/report/html_report.h"
#include "sim/report/json_report.h"
#include "sim/report/progress.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"
#include "sim/units/overflow_error.h"
#include "sim/units/utf8.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

enum class ReportFormat { Text, Json, Csv, Markdown };

struct RunOptions {
  std::string scenario;
  std::vector<std::string> schedules;  // only these (empty: the scenario's list)
  ReportFormat format = ReportFormat::Text;
  std::string output;                      // "" = stdout
  bool allow_oom = false;                  // out_of_memory is reported but exits 0
  std::string trace;                       // Chrome trace JSON file ("" = none); one per schedule
  std::string html;                        // HTML report file ("" = none)
  std::size_t html_max_ops = kHtmlMaxOps;  // --html-max-ops: aggregate beyond this many ops
  CommandLineSettings scenario_settings;   // --max-ops, --stream, --threads (scenario.h)
  std::string baseline;                    // --baseline: speed-ups against it ("" = 1f1b if it ran)
  bool compare = false;                    // the compare form: verdict and level tables, by speed
  bool fail_on_failure = true;             // --fail-on failure (default) | none
  bool trace_combined = false;  // --trace-combined: one trace file, a process per schedule
  std::size_t trace_max_events = 500'000;  // --trace-max-events: per schedule; 0 = no bound
  bool quiet = false;                      // -q: no "wrote FILE" lines
};

/// `error`'s diagnostics, those without a file placed in `file`.
std::vector<Diagnostic> located_in(const InputError& error, const std::string& file) {
  std::vector<Diagnostic> out = error.diagnostics();
  for (Diagnostic& d : out)
    if (d.where.file.empty()) d.where.file = file;
  return out;
}

/// A note on stderr when a trace kept only its first events (--trace-max-events).
void say_truncated(const ChromeTraceWriter& trace, const std::string& label,
                   std::size_t max_events) {
  if (!trace.truncation()) return;
  const TraceTruncation& t = *trace.truncation();
  fmt::print(stderr,
             "note: the trace of {} keeps the replay's first {} events (until {} us) and leaves "
             "out {} later ones; raise --trace-max-events (now {}; 0: no bound) to keep more\n",
             label, t.kept, format_microseconds(t.cut.ps()), t.dropped, max_events);
}

/// 1 when a schedule failed (deadlock, out of memory unless allowed, infeasible), else 0.
int exit_code_for(const ScenarioRun& result, bool allow_oom) {
  if (!result.infeasible.empty()) return 1;
  for (const ScheduleRun& r : result.runs) {
    if (r.simulation.status == RunStatus::OutOfMemory && allow_oom) continue;
    if (r.simulation.status != RunStatus::Ok) return 1;
  }
  return 0;
}

/// "2 of 6 schedules failed (gpipe: out_of_memory, optimized: infeasible)", or "" when none did.
std::string failure_summary(const ScenarioRun& result) {
  std::vector<std::string> failed;
  for (const ScheduleRun& r : result.runs)
    if (r.simulation.status != RunStatus::Ok)
      failed.push_back(fmt::format("{}: {}", r.label, run_status_name(r.simulation.status)));
  for (const InfeasibleSchedule& i : result.infeasible)
    failed.push_back(fmt::format("{}: infeasible", i.label));
  if (failed.empty()) return "";
  return fmt::format("{} of {} schedules failed ({})", failed.size(),
                     result.runs.size() + result.infeasible.size(), fmt::join(failed, ", "));
}

/// The trace file of each run (labels in run order) when each schedule gets its own: the --trace
/// name with the label before its extension, numbered where two labels sanitise alike.
std::vector<std::string> per_schedule_trace_files(const std::string& trace,
                                                  const std::vector<std::string>& labels) {
  std::vector<std::string> files;
  for (const std::string& label : labels) {
    std::string unique = trace_file_for_schedule(trace, label);
    for (int n = 2; std::find(files.begin(), files.end(), unique) != files.end(); ++n)
      unique = trace_file_for_schedule(trace, fmt::format("{}-{}", label, n));
    files.push_back(unique);
  }
  return files;
}

/// Standard output ('-', and -o left out for the report) carries one output, and --trace '-' one
/// trace: refused before anything runs, instead of a report and a page mixed on stdout or trace
/// files named "-.LABEL".
void check_standard_output(const RunOptions& options, std::size_t schedules) {
  std::vector<std::string> on_stdout;
  if (options.output.empty() || options.output == "-") on_stdout.emplace_back("the report");
  if (options.trace == "-") {
    if (schedules > 1 && !options.trace_combined) {
      throw InputError(fmt::format(
          "--trace: '-' (standard output) holds one trace and this run writes one per schedule "
          "({}): add --trace-combined or name a file",
          schedules));
    }
    on_stdout.emplace_back("the trace (--trace -)");
  }
  if (options.html == "-") on_stdout.emplace_back("the HTML report (--html -)");
  if (on_stdout.size() > 1) {
    throw InputError(fmt::format(
        "{} would {} go to standard output, mixed: write all but one to files (-o FILE for the "
        "report)",
        fmt::join(on_stdout, " and "), on_stdout.size() == 2 ? "both" : "all"));
  }
}

int run_command(const Registry& registry, const RunOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  Scenario scenario = load_scenario_file(options.scenario, registry);
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  scenario.command_line = options.scenario_settings;
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
  check_standard_output(
      options, options.schedules.empty() ? scenario.schedules.size() : options.schedules.size());
  {
    // Every file this run may write, checked together before anything runs: a per-schedule
    // trace named like the report or the HTML page (or like an input) would overwrite it.
    std::vector<std::string> outputs = {options.output, options.trace, options.html};
    std::vector<std::string> labels;
    for (const ScheduleRequest& r : scenario.schedules) {
      if (options.schedules.empty() || std::find(options.schedules.begin(), options.schedules.end(),
                                                 r.name) != options.schedules.end())
        if (const Generator* g = registry.find(r.name))
          labels.push_back(schedule_label(*g, r.params));
    }
    if (!options.trace.empty() && options.trace != "-" && !options.trace_combined &&
        labels.size() > 1) {
      for (std::string& file : per_schedule_trace_files(options.trace, labels))
        outputs.push_back(std::move(file));
    }
    check_outputs(outputs);
  }
  // Recorders for --trace and --html, one set per entry of result.runs.
  struct Recorders {
    std::unique_ptr<ChromeTraceWriter> trace;
    std::unique_ptr<MemoryTimeline> memory;  // --html without --trace
    std::unique_ptr<CommLaneRecorder> comm;  // --html: the communication lanes
  };
  std::vector<Recorders> recorders;
  ScenarioRunHooks hooks;
  if (!options.trace.empty() || !options.html.empty()) {
    hooks.observers = [&](std::size_t index) {
      if (recorders.size() <= index) recorders.resize(index + 1);
      Recorders& r = recorders[index] = Recorders{};  // a skipped schedule's recorders are replaced
      std::vector<EngineObserver*> observers;
      if (!options.trace.empty()) {
        r.trace = std::make_unique<ChromeTraceWriter>(scenario.stages, options.trace_max_events);
        observers.push_back(r.trace.get());
      } else {
        r.memory = std::make_unique<MemoryTimeline>(scenario.stages);
        observers.push_back(r.memory.get());
      }
      if (!options.html.empty() && scenario.communication.kind == CommunicationKind::Topology) {
        r.comm = std::make_unique<CommLaneRecorder>(3 * options.html_max_ops + 1000);
        observers.push_back(r.comm.get());
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
  // Progress only on a terminal (not in CI logs or pipes, nor with -q), after a second: a line
  // per schedule with its phase (setup, the replay's simulated time, Monte Carlo samples, the
  // optimizer's status) and the time it has taken.
  ProgressReporter progress("run", schedule_count, stderr,
                            !options.quiet && ::isatty(::fileno(stderr)) != 0);
  hooks.on_schedule = [&](std::size_t, std::size_t, const ScheduleRequest& request) {
    progress.step(visible_controls(request.name));
  };
  hooks.on_progress = [&](const std::string& status) { progress.detail(status); };
  ScenarioRun result;
  try {
    result = run_scenario(scenario, registry, options.schedules, hooks);
  } catch (const OverflowError& e) {
    // Which input: the times and sizes of this file add up past 64 bits.
    throw OverflowError(fmt::format("{}: {}", options.scenario, e.what()));
  } catch (const InputError& e) {
    // Found while running (a limit, a table file): name the scenario where nothing else is named.
    throw InputError(located_in(e, options.scenario));
  }
  progress.finish();
  result.load_s = load_s;
  for (const ScheduleRun& run : result.runs) {
    // Named only where holding the table would have been refused.
    if (run.streamed_ops <= static_cast<std::uint64_t>(options.scenario_settings.max_ops) ||
        options.quiet || options.scenario_settings.stream == StreamMode::On)
      continue;
    fmt::print(stderr,
               "note: {} has {} ops, more than --max-ops ({}): replayed from its order stream "
               "without holding the table (docs/engine.md, \"Streamed replay\")\n",
               visible_controls(run.label), run.streamed_ops, options.scenario_settings.max_ops);
  }

  if (!options.trace.empty()) {
    const bool several = result.runs.size() > 1 && !options.trace_combined;
    std::vector<std::string> labels;
    for (const ScheduleRun& run : result.runs) labels.push_back(run.label);
    const std::vector<std::string> files =
        several ? per_schedule_trace_files(options.trace, labels) : std::vector<std::string>();
    std::vector<std::pair<std::string, std::string>> combined;  // label, trace
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      const ScheduleRun& run = result.runs[i];
      TraceContext context;
      context.label = run.label;
      context.devices = run.table.devices;
      context.stage_costs = &run.stage_costs;
      if (scenario.communication.kind == CommunicationKind::Topology) {
        context.topology = scenario.communication.topology.get();
        context.device_vertex = scenario.communication.placement;
      }
      say_truncated(*recorders[i].trace, run.label, options.trace_max_events);
      if (options.trace_combined) {
        combined.emplace_back(run.label, recorders[i].trace->to_json(context));
        continue;
      }
      const std::string& unique = several ? files[i] : options.trace;
      write_file_atomically(unique, recorders[i].trace->to_json(context));
      say_written(options.quiet, unique, "Chrome trace of " + run.label);
      if (options.html.empty()) recorders[i].trace.reset();  // its memory is not needed again
    }
    if (options.trace_combined && !combined.empty()) {
      write_file_atomically(options.trace, combine_traces(combined));
      say_written(options.quiet, options.trace,
                  fmt::format("Chrome trace, a process group per schedule: {}", combined.size()));
    }
  }
  if (!options.html.empty()) {
    std::vector<const MemoryTimeline*> memory;
    std::vector<const CommLaneRecorder*> lanes;
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      memory.push_back(recorders[i].trace ? &recorders[i].trace->memory()
                                          : recorders[i].memory.get());
      lanes.push_back(recorders[i].comm.get());
    }
    write_file_atomically(options.html,
                          render_html_report(scenario, result, memory, options.baseline,
                                             options.html_max_ops, lanes));
    say_written(options.quiet, options.html, "HTML report");
  }

  ReportOptions report;
  report.width = text_width();
  report.baseline = options.baseline;
  report.compare = options.compare;
  std::string content;
  switch (options.format) {
    case ReportFormat::Text:
      content = scenario_report_text(scenario, result, report);
      break;
    case ReportFormat::Json:
      content = scenario_report_json(scenario, result, report).dump(2);
      content += "\n";
      break;
    case ReportFormat::Csv:
      content = scenario_report_csv(scenario, result);
      break;
    case ReportFormat::Markdown:
      content = scenario_report_markdown(scenario, result, report);
      break;
  }
  static constexpr const char* kFormatNames[] = {"text", "JSON", "CSV", "Markdown"};
  emit(options.output, content, options.quiet,
       fmt::format("{} report", kFormatNames[static_cast<int>(options.format)]));
  const int code = exit_code_for(result, options.allow_oom);
  // The text report's verdict says which schedules failed; other formats say it here too.
  const std::string failures = failure_summary(result);
  if (!failures.empty() && !options.quiet &&
      (options.format != ReportFormat::Text || !options.output.empty())) {
    fmt::print(stderr, "{}{}\n", failures,
               code == 0                 ? ""
               : options.fail_on_failure ? ": exit 1"
                                         : " (--fail-on none: exit 0)");
  }
  return options.fail_on_failure ? code : 0;
}

}  // namespace

void add_run_commands(CLI::App& app, CommandSet& commands) {
  struct Options {
    RunOptions run;
    std::string format = "text";
    std::string fail_on = "failure";
    std::string stream = "auto";
    std::string symmetry = "auto";
  };
  auto options = std::make_shared<Options>();
  for (const char* name : {"run", "compare"}) {
    CLI::App* cmd = app.add_subcommand(
        name, std::string(name) == "run"
                  ? "run a scenario: the verdict (fastest first), then every schedule at three "
                    "levels with the details"
                  : "compare the scenario's schedules: the verdict and the three levels, fastest "
                    "first");
    cmd->add_option("scenario", options->run.scenario, "scenario YAML file")->required();
    cmd->add_option("--schedule", options->run.schedules, "run only this schedule (repeatable)");
    cmd->add_option("--format", options->format, "report format: text, json, csv or md (Markdown)")
        ->check(CLI::IsMember({"text", "json", "csv", "md"}));
    cmd->add_option("-o,--output", options->run.output,
                    "write the report to FILE (atomically) instead of stdout");
    cmd->add_flag("--allow-oom", options->run.allow_oom,
                  "report out_of_memory outcomes but exit 0 (by default they exit 1)");
    cmd->add_option("--baseline", options->run.baseline,
                    "speed-ups in the verdict are against this schedule (label or name; default "
                    "1f1b when it ran)");
    cmd->add_option("--fail-on", options->fail_on,
                    "failure (default): exit 1 when a schedule failed (out of memory, deadlock, "
                    "infeasible); none: exit 0 after reporting them")
        ->check(CLI::IsMember({"failure", "none"}));
    cmd->add_option("--trace", options->run.trace,
                    "write a Chrome trace (Perfetto) of each simulation replay to FILE; with "
                    "several schedules, "
                    "one file each, named FILE with the schedule label before the extension");
    cmd->add_option("--trace-max-events", options->run.trace_max_events,
                    "record at most N events (ops, transfers, syncs) per schedule's trace, the "
                    "replay's first ones, with a note when more were left out (default 500000; "
                    "0: no bound)");
    cmd->add_flag("--trace-combined", options->run.trace_combined,
                  "with --trace and several schedules: one file with a process group per "
                  "schedule instead of one file each");
    cmd->add_option("--html", options->run.html,
                    "write a self-contained HTML report (timelines, memory, summary) to FILE");
    cmd->add_option("--html-max-ops", options->run.html_max_ops,
                    "with --html: embed at most this many ops one by one; longer timelines are "
                    "drawn as per-device utilisation bins with full detail for their first ops "
                    "(default 100000)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40));
    cmd->add_option("--max-ops", options->run.scenario_settings.max_ops,
                    "refuse schedules whose table has more ops (default 50000000)")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
    cmd->add_option("--stream", options->stream,
                    "auto (default): replay a schedule from its order stream without holding "
                    "its table whenever it can be (1f1b, interleaved-1f1b; same report; not "
                    "with --trace or --html; docs/engine.md), which also lifts --max-ops for "
                    "it; on: always (an error when it cannot); off: never")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    cmd->add_option("--skip-pass", options->run.scenario_settings.skip_passes,
                    "leave out a table pass the scenario asks for, by name, to see what it "
                    "changes (an ablation; repeatable): a2a-pairing, recompute, offload")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--symmetry", options->symmetry,
                    "auto (default): solve the flows of collectives over many replicas one class "
                    "of identical flows at a time (the same rates; docs/engine.md, \"Symmetric "
                    "flows\"); off: every flow on its own (slower; the report says which ran)")
        ->check(CLI::IsMember({"auto", "off"}));
    cmd->add_option("--threads", options->run.scenario_settings.threads,
                    "worker threads of the Monte Carlo samples of a scenario with variability "
                    "(default: every core; the report does not depend on it)")
        ->check(CLI::Range(1, 1024));
    const bool compare = std::string(name) == "compare";
    commands.add(cmd, [options, compare](CommandContext& context) {
      options->run.compare = compare;
      options->run.quiet = context.quiet;
      options->run.fail_on_failure = options->fail_on == "failure";
      options->run.scenario_settings.stream = options->stream == "on"    ? StreamMode::On
                                              : options->stream == "off" ? StreamMode::Off
                                                                         : StreamMode::Auto;
      options->run.scenario_settings.symmetry = options->symmetry == "auto";
      const std::string& f = options->format;
      options->run.format = f == "json"  ? ReportFormat::Json
                            : f == "csv" ? ReportFormat::Csv
                            : f == "md"  ? ReportFormat::Markdown
                                         : ReportFormat::Text;
      return run_command(context.registry, options->run);
    });
  }
}

}  // namespace bubblesim
