// `bubblesim sweep` and `bubblesim merge`: parameter sweeps, sharded across machines.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "sim/report/atomic_file.h"
#include "sim/report/sweep_plot.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/units/diagnostics.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

// The plot of a finished sweep CSV (sim/report/sweep_plot.h), written atomically.
void write_plot(const std::string& csv_path, const std::string& html_path,
                const std::string& metric) {
  std::ifstream in(csv_path);
  if (!in) throw InputError(fmt::format("cannot read '{}'", csv_path));
  std::stringstream csv;
  csv << in.rdbuf();
  write_file_atomically(html_path, render_sweep_plot(csv.str(), metric, csv_path));
}

}  // namespace

void add_sweep_commands(CLI::App& app, CommandSet& commands) {
  struct Options {
    std::string sweep, output, shard;
    int jobs = 0;
    std::int64_t max_ops = 50'000'000;
    bool resume = false;
    std::vector<std::string> parts;
    std::string merged;
    std::string html, metric = "bubble_ratio_span";
    std::string merge_html, merge_metric = "bubble_ratio_span";
  };
  auto o = std::make_shared<Options>();
  CLI::App* sweep =
      app.add_subcommand("sweep", "run a base scenario over axes of its keys, rows to CSV");
  sweep->add_option("sweep", o->sweep, "sweep YAML file")->required();
  sweep
      ->add_option("-o,--output", o->output,
                   "CSV file to write (rows stream into FILE.partial, renamed to FILE at the "
                   "end)")
      ->required();
  sweep->add_option("--jobs", o->jobs, "worker threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
  sweep
      ->add_option("--max-ops", o->max_ops,
                   "a point whose table has more ops is an invalid row (default 50000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  sweep->add_flag("--resume", o->resume,
                  "continue an interrupted sweep: keep the checked rows of FILE.partial (or "
                  "FILE) and run the rest");
  sweep->add_option("--shard", o->shard,
                    "run slice I of N (0-based I/N); default from SLURM_ARRAY_TASK_ID/COUNT or "
                    "JOB_COMPLETION_INDEX with BUBBLESIM_SHARD_COUNT");
  sweep->add_option(
      "--html", o->html,
      "also write a self-contained HTML page with one line chart per sweep (x: the first axis), "
      "after the CSV is complete");
  sweep->add_option("--plot-metric", o->metric,
                    "the CSV column the plot shows (default bubble_ratio_span; `bubblesim list "
                    "--plot-metrics` lists them)");
  commands.add(sweep, [o](CommandContext& context) {
    if (!o->html.empty()) check_sweep_plot_metric(o->metric);
    SweepSpec spec = load_sweep(o->sweep);
    // Refused before any point runs: an output onto the spec or its base, a missing folder; the
    // lock makes a second sweep onto the same file fail instead of alternating with this one.
    if (o->output == "-") {
      throw InputError(
          "sweep -o: '-' (standard output) cannot hold a sweep, whose CSV streams into a "
          "partial file that --resume continues: name a file");
    }
    check_outputs({o->output, o->html});
    OutputLock lock(o->output);
    SweepOptions options;
    options.output = o->output;
    options.jobs =
        o->jobs > 0 ? o->jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    options.resume = o->resume;
    options.max_ops = o->max_ops;
    options.shard = o->shard.empty() ? shard_from_environment() : parse_shard(o->shard);
    options.progress = true;
    for (const LoadedPlugin& plugin : context.plugins.loaded())
      options.plugins.push_back(plugin.canonical_path);
    if (!o->html.empty() && options.shard.count > 1) {
      throw InputError(
          fmt::format("--html: shard {}/{} holds part of the sweep; plot the whole sweep with "
                      "`bubblesim merge -o FILE PARTS... --html {}`",
                      options.shard.index, options.shard.count, o->html));
    }
    SweepSummary s = run_sweep(spec, context.registry, options);
    for (const std::string& note : s.notes) fmt::print(stderr, "note: {}\n", note);
    say_written(context.quiet, o->output,
                fmt::format("{} points: {} resumed, {} invalid; {} rows; {} bytes written",
                            s.points, s.resumed, s.failed, s.rows, s.bytes_written));
    if (!o->html.empty()) {
      write_plot(o->output, o->html, o->metric);
      say_written(context.quiet, o->html, "plot of " + o->metric);
    }
    return 0;
  });

  CLI::App* merge =
      app.add_subcommand("merge", "join sharded sweep outputs into the file one run would write");
  merge->add_option("-o,--output", o->merged, "merged CSV file")->required();
  merge->add_option("parts", o->parts, "shard outputs")->required();
  merge->add_option("--html", o->merge_html,
                    "also write the HTML plot of the merged sweep (as `sweep --html`)");
  merge->add_option("--plot-metric", o->merge_metric,
                    "the CSV column the plot shows (default bubble_ratio_span; `bubblesim list "
                    "--plot-metrics` lists them)");
  commands.add(merge, [o](CommandContext& context) {
    if (!o->merge_html.empty()) check_sweep_plot_metric(o->merge_metric);
    merge_sweep_outputs(o->parts, o->merged);
    say_written(context.quiet, o->merged, fmt::format("{} parts merged", o->parts.size()));
    if (!o->merge_html.empty()) {
      write_plot(o->merged, o->merge_html, o->merge_metric);
      say_written(context.quiet, o->merge_html, "plot of " + o->merge_metric);
    }
    return 0;
  });
}

}  // namespace bubblesim
