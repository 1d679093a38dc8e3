// `bubblesim sweep` and `bubblesim merge`: parameter sweeps, sharded across machines.
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "tools/cli/command_set.h"
#include "tools/sweep/sweep_runner.h"

namespace bubblesim {

void add_sweep_commands(CLI::App& app, CommandSet& commands) {
  struct Options {
    std::string sweep, output, shard;
    int jobs = 0;
    std::int64_t max_ops = 50'000'000;
    bool resume = false;
    std::vector<std::string> parts;
    std::string merged;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sweep = app.add_subcommand("sweep", "run a base scenario over axes of its keys, rows to CSV");
  sweep->add_option("sweep", o->sweep, "sweep YAML file")->required();
  sweep->add_option("-o,--output", o->output, "CSV file to write (rewritten atomically as rows finish)")->required();
  sweep->add_option("--jobs", o->jobs, "worker threads (default: all cores)")->check(CLI::Range(1, 4096));
  sweep->add_option("--max-ops", o->max_ops, "a point whose table has more ops is an invalid row (default 50000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  sweep->add_flag("--resume", o->resume, "keep the rows already in the output and run the rest");
  sweep->add_option("--shard", o->shard,
                    "run slice I of N (0-based I/N); default from SLURM_ARRAY_TASK_ID/COUNT or "
                    "JOB_COMPLETION_INDEX with BUBBLESIM_SHARD_COUNT");
  commands.add(sweep, [o](CommandContext& context) {
    SweepSpec spec = load_sweep(o->sweep);
    SweepOptions options;
    options.output = o->output;
    options.jobs = o->jobs > 0 ? o->jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    options.resume = o->resume;
    options.max_ops = o->max_ops;
    options.shard = o->shard.empty() ? shard_from_environment() : parse_shard(o->shard);
    options.progress = true;
    SweepSummary s = run_sweep(spec, context.registry, options);
    fmt::print(stderr, "sweep: {} points ({} resumed, {} invalid), {} rows -> {}\n", s.points, s.resumed, s.failed,
               s.rows, o->output);
    return 0;
  });

  CLI::App* merge = app.add_subcommand("merge", "join sharded sweep outputs into the file one run would write");
  merge->add_option("-o,--output", o->merged, "merged CSV file")->required();
  merge->add_option("parts", o->parts, "shard outputs")->required();
  commands.add(merge, [o](CommandContext&) {
    merge_sweep_outputs(o->parts, o->merged);
    return 0;
  });
}

}  // namespace bubblesim
