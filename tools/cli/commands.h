#pragma once
// The subcommands of the `bubblesim` CLI. Each returns the process exit code:
// 0 ok, 1 a simulated failure (deadlock, out of memory), 2 bad input. They throw InputError for
// bad input; main catches it.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "tools/cli/command_set.h"

namespace bubblesim {

enum class ReportFormat { Text, Json, Csv, Markdown };

struct RunOptions {
  std::string scenario;
  std::vector<std::string> schedules;  // only these (empty: the scenario's list)
  ReportFormat format = ReportFormat::Text;
  std::string output;                 // "" = stdout
  bool allow_oom = false;             // out_of_memory is reported but exits 0
  std::string trace;                  // Chrome trace JSON file ("" = none); one per schedule
  std::string html;                   // HTML report file ("" = none)
  std::int64_t max_ops = 50'000'000;  // --max-ops: refuse larger tables (kDefaultMaxOps)
  int threads = 0;  // --threads: Monte Carlo workers (variability); 0 = every hardware thread
};

int command_run(const Registry& registry, const RunOptions& options);
/// `table` output: the grid, PyTorch's per-rank CSV, or bubblesim's table CSV with replay times.
struct TableOptions {
  std::string scenario, schedule, output;
  std::string format = "grid";        // grid | torch-csv | csv
  std::string dialect = "current";    // torch-csv: current | 2024
  std::int64_t max_ops = 50'000'000;  // --max-ops
};

int command_table(const Registry& registry, const TableOptions& options);
int command_list(const Registry& registry);
/// `explain NAME [SCENARIO]`: without a scenario, the schedule and its parameters; with one, the
/// schedule run at the scenario, its memory decisions and a comparison with the baselines.
struct ExplainOptions {
  std::string name;
  std::string scenario;         // "" = the plain description
  std::string format = "text";  // text | json (scenario form only)
};

int command_explain(const Registry& registry, const ExplainOptions& options);
int command_validate(const Registry& registry, const std::string& scenario);

}  // namespace bubblesim
