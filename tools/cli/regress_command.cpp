// `bubblesim regress`: compare a JSON report against a baseline for CI (see
// sim/report/regression.h).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "sim/report/atomic_file.h"
#include "sim/report/regression.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {

void add_regress_commands(CLI::App& app, CommandSet& commands) {
  struct Options {
    std::string baseline, current, tolerance = "1%", benchmark_json, only, fail_on = "regression";
    bool all = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "regress",
      "compare a JSON report with a baseline: each schedule's iteration time (else makespan) and "
      "peak memory; exit 1 on a regression beyond the tolerance");
  cmd->add_option("--baseline", options->baseline,
                  "baseline JSON report (bubblesim run --format json)")
      ->required();
  cmd->add_option("--current", options->current, "current JSON report")->required();
  cmd->add_option("--tolerance", options->tolerance,
                  "allowed relative worsening, e.g. 1% (default) or 0.01");
  cmd->add_option("--only", options->only,
                  "compare only these metrics: LEVEL.KEY or KEY, comma-separated (e.g. "
                  "simulation.makespan_s,bubble_ratio)");
  cmd->add_flag("--all", options->all,
                "judge and list every metric, not only the iteration time (or makespan) and peak "
                "memory");
  cmd->add_option("--fail-on", options->fail_on,
                  "exit 1 on: regression (default), any (also an improvement or differing "
                  "scenarios), none");
  cmd->add_option("--benchmark-json", options->benchmark_json,
                  "also write github-action-benchmark customSmallerIsBetter JSON of the current "
                  "report to FILE");
  commands.add(cmd, [options](CommandContext& context) {
    const double tolerance = parse_tolerance(options->tolerance);
    const FailOn fail_on = parse_fail_on(options->fail_on);
    nlohmann::json baseline = read_json_file(options->baseline);
    nlohmann::json current = read_json_file(options->current);
    const std::vector<std::string> only =
        options->only.empty() ? std::vector<std::string>{} : parse_metric_names(options->only);
    RegressionReport report = compare_reports(baseline, current, tolerance, options->baseline,
                                              options->current, only, options->all);
    if (!report.scenario_differences.empty()) {
      std::fprintf(stderr,
                   "bubblesim: warning: the reports are of different scenarios (they differ in "
                   "%zu keys of the resolved scenario, listed in the report)\n",
                   report.scenario_differences.size());
    }
    if (!options->benchmark_json.empty()) {
      write_file_atomically(options->benchmark_json, benchmark_entries(current).dump(2) + "\n");
      say_written(context.quiet, options->benchmark_json, "github-action-benchmark JSON");
    }
    std::string out = regression_markdown(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return fails(report, fail_on) ? 1 : 0;
  });
}

}  // namespace bubblesim
