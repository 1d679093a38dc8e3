// `bubblesim table SCENARIO --schedule NAME`: one schedule's device x time-slot grid, or its table
// exported as PyTorch's per-rank CSV, bubblesim's table CSV or Chakra execution traces (one per
// rank), the last two with the idealized replay's times.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "schedules/chakra_et.h"
#include "schedules/table_csv.h"
#include "schedules/torch_csv.h"
#include "sim/engine/engine.h"
#include "sim/report/atomic_file.h"
#include "sim/report/grid_renderer.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/runner/table_costs.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/quantity_parser.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

/// `table` output: the grid, PyTorch's per-rank CSV, or bubblesim's table CSV with replay times.
struct TableOptions {
  std::string scenario, schedule, output;
  std::string format = "grid";        // grid | torch-csv | csv | chakra
  std::string dialect = "current";    // torch-csv: current | 2024
  std::int64_t max_ops = 50'000'000;  // --max-ops
  bool quiet = false;                 // -q: no "wrote FILE" line
  std::size_t width = 0;              // grid: --width (0: the terminal's COLUMNS)
  std::string slot;                   // grid: --slot TIME ("" = chosen to fit)
};

OpTimes op_times(const SimulationResult& ideal) {
  OpTimes times(ideal.timings.size());
  for (std::size_t d = 0; d < ideal.timings.size(); ++d) {
    for (const OpTiming& t : ideal.timings[d]) times[d].emplace_back(t.start, t.end);
  }
  return times;
}

/// --format chakra: the folder `dir` gets one execution trace per rank (chakra_et.h) with the
/// idealized replay's times and each stage's p2p bytes as the send/receive sizes. Every rank's
/// path is checked (not an input of this run, not written twice) before the folder is made or
/// any file written, so a refused run leaves nothing behind.
void write_chakra_folder(const std::string& dir, const Table& table, const SimulationResult& ideal,
                         const std::vector<StageCost>& costs, bool quiet) {
  std::vector<std::int64_t> bytes;
  for (const StageCost& c : costs) bytes.push_back(c.p2p.count());
  const std::vector<std::string> traces = write_chakra_traces(table, op_times(ideal), bytes);
  std::vector<std::string> paths;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    paths.push_back(
        (std::filesystem::path(dir) / chakra_file_name(static_cast<std::int32_t>(r))).string());
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec))
    check_outputs(paths);  // a folder made here holds no input and no other output
  else
    std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(
        fmt::format("-o {}: --format chakra writes a folder and it cannot be created", dir));
  for (std::size_t r = 0; r < traces.size(); ++r) {
    write_file_atomically(paths[r], traces[r]);
    say_written(quiet, paths[r], fmt::format("Chakra execution trace of rank {}", r));
  }
}

int table_command(const Registry& registry, const TableOptions& options) {
  const std::string& scenario_path = options.scenario;
  const std::string& schedule = options.schedule;
  const std::string& output = options.output;
  Scenario scenario = load_scenario_file(scenario_path, registry);
  scenario.command_line.max_ops = options.max_ops;
  const bool chakra = options.format == "chakra";
  if (chakra && (output.empty() || output == "-"))
    throw InputError("--format chakra: needs -o DIR, the folder for one trace file per rank");
  check_outputs({chakra ? std::string() : output});
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
  std::vector<StageCost> costs = table_costs(resolved, table.chunks, request);
  SimulationResult ideal = simulate(make_engine_input(resolved, table, costs, Replay::Idealized));
  if (options.format == "torch-csv") {
    try {
      emit(output, write_torch_csv(table, *torch_dialect_from_name(options.dialect)), options.quiet,
           "PyTorch schedule CSV");
    } catch (const std::invalid_argument& e) {
      throw InputError(
          fmt::format("--format torch-csv: {} cannot be written as a PyTorch schedule file: {}",
                      schedule, e.what()));
    }
    return ideal.status == RunStatus::Ok ? 0 : 1;
  }
  if (chakra) {
    write_chakra_folder(output, table, ideal, costs, options.quiet);
    return ideal.status == RunStatus::Ok ? 0 : 1;
  }
  if (options.format == "csv") {
    emit(output, write_table_csv(table, op_times(ideal)), options.quiet, "table CSV");
    return ideal.status == RunStatus::Ok ? 0 : 1;
  }
  std::optional<Time> slot;
  if (!options.slot.empty()) {
    try {
      slot = parse_time(options.slot);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("--slot: {}", e.what()));
    }
    if (slot->ps() <= 0)
      throw InputError(
          fmt::format("--slot: '{}' is not a positive time (e.g. 1ms, 250us)", options.slot));
  }
  emit(output,
       table_grid_report(schedule, table, ideal, options.width > 0 ? options.width : text_width(),
                         slot),
       options.quiet, "grid");
  return ideal.status == RunStatus::Ok ? 0 : 1;
}

}  // namespace

void add_table_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<TableOptions>();
  CLI::App* cmd =
      app.add_subcommand("table", "print a schedule's device x time-slot grid or export its table");
  cmd->add_option("scenario", options->scenario, "scenario YAML file")->required();
  cmd->add_option("--schedule", options->schedule, "schedule name")->required();
  cmd->add_option("--format", options->format,
                  "grid (default), torch-csv (PyTorch per-rank CSV), csv (bubblesim table CSV "
                  "with replay times) or chakra (one Chakra execution trace per rank in -o DIR)")
      ->check(CLI::IsMember({"grid", "torch-csv", "csv", "chakra"}));
  cmd->add_option("--dialect", options->dialect, "torch-csv dialect: current (default) or 2024")
      ->check(CLI::IsMember({"current", "2024"}));
  cmd->add_option("-o,--output", options->output,
                  "write to FILE instead of stdout (chakra: the folder DIR)");
  cmd->add_option("--width", options->width,
                  "grid: characters per line (default: COLUMNS, else 100); a wider grid is drawn "
                  "one character per slot")
      ->check(CLI::Range(std::size_t{20}, std::size_t{100000}));
  cmd->add_option("--slot", options->slot, "grid: time per character (e.g. 1ms)");
  cmd->add_option("--max-ops", options->max_ops, "refuse a table with more ops (default 50000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  commands.add(cmd, [options](CommandContext& context) {
    options->quiet = context.quiet;
    return table_command(context.registry, *options);
  });
}

}  // namespace bubblesim
