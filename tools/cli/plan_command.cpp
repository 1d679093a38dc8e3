// `bubblesim plan [PLAN.yaml]`: the layouts of a training job on a cluster, ranked
// (sim/plan/plan.h, docs/plan.md). The job comes from a plan file or from flags; the report is
// text, JSON, CSV or Markdown, with an optional HTML page and the scenario file of every replayed
// layout. Exit 1 when no layout ran without failing.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "sim/plan/plan.h"
#include "sim/plan/plan_report.h"
#include "sim/report/atomic_file.h"
#include "sim/report/progress.h"
#include "sim/units/diagnostics.h"
#include "tools/cli/command_output.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

struct PlanCommandOptions {
  std::string plan;
  PlanFlags flags;
  PlanOptions search;
  std::string format = "text", output, html, emit;
};

// "03-tp4-pp8-dp8-zero1-mbs1-full-zb-v.yaml": the rank and the label, file-name safe.
std::string emitted_name(std::size_t rank, const std::string& label) {
  std::string name = fmt::format("{:02d}-", rank);
  for (char c : label) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    name += plain ? c : '-';
  }
  while (name.find("--") != std::string::npos) name.erase(name.find("--"), 1);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name + ".yaml";
}

int plan_command(const Registry& registry, PlanCommandOptions& o, bool quiet) {
  if (!o.plan.empty() &&
      (!o.flags.model.empty() || !o.flags.gpu.empty() || o.flags.nodes > 0 ||
       !o.flags.topology.empty() || o.flags.global_batch > 0 || o.flags.seq_len > 0)) {
    throw InputError(
        "plan: give the job either as a plan file or as flags (--model, --gpu, --nodes, "
        "--global-batch, --seq-len), not both");
  }
  PlanSpec spec = o.plan.empty() ? plan_from_flags(o.flags) : load_plan_file(o.plan);
  check_outputs({o.output, o.html});
  if (!o.emit.empty() && !std::filesystem::is_directory(o.emit))
    throw InputError(fmt::format("--emit: '{}' is not a folder", o.emit));
  ProgressReporter progress("plan", 0, stderr);
  o.search.progress = [&](const std::string& status) { progress.detail(status); };
  const PlanResult result = run_plan(spec, registry, o.search);
  progress.finish();
  if (!o.html.empty()) {
    write_file_atomically(o.html, plan_report_html(result));
    say_written(quiet, o.html, "HTML plan");
  }
  if (!o.emit.empty()) {
    for (std::size_t k = 0; k < result.ranked.size(); ++k) {
      const PlanCandidate& c = result.candidates[result.ranked[k]];
      const std::string path =
          (std::filesystem::path(o.emit) / emitted_name(k + 1, c.label)).string();
      write_file_atomically(path, "# " + c.label + ": rank " + std::to_string(k + 1) +
                                      " of bubblesim plan " + spec.file + "\n" + c.scenario_yaml);
    }
    say_written(quiet, o.emit,
                fmt::format("the scenarios of the {} ranked layouts", result.ranked.size()));
  }
  std::string content;
  if (o.format == "json")
    content = plan_report_json(result).dump(2) + "\n";
  else if (o.format == "csv")
    content = plan_report_csv(result);
  else if (o.format == "md")
    content = plan_report_markdown(result);
  else
    content = plan_report_text(result, text_width());
  emit(o.output, content, quiet, "plan report");
  return result.ranked.empty() ? 1 : 0;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "rank the layouts (TP, PP, DP/ZeRO, CP, EP, micro-batch, recompute, schedule) of a job on "
      "a cluster: enumerate, prune, estimate, replay the best (docs/plan.md)");
  cmd->add_option("plan", o->plan, "plan YAML file (or give the job as flags)");
  cmd->add_option("--model", o->flags.model, "model preset (bubblesim list --presets)");
  cmd->add_option("--gpu", o->flags.gpu, "GPU preset");
  cmd->add_option("--nodes", o->flags.nodes,
                  "nodes of the multi-node builder (DGX H100 links: NVLink inside, one 400 Gb/s "
                  "NIC per GPU)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}));
  cmd->add_option("--gpus-per-node", o->flags.gpus_per_node, "GPUs per node (default 8)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1024}));
  cmd->add_option("--topology", o->flags.topology, "a topology file instead of --nodes");
  cmd->add_option("--global-batch", o->flags.global_batch, "sequences per optimizer step")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--seq-len", o->flags.seq_len, "tokens per sequence")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  cmd->add_option("--format", o->format, "report format: text, json, csv or md (Markdown)")
      ->check(CLI::IsMember({"text", "json", "csv", "md"}));
  cmd->add_option("-o,--output", o->output, "write the report to FILE (atomically)");
  cmd->add_option("--html", o->html, "also write a self-contained HTML page to FILE");
  cmd->add_option("--emit", o->emit,
                  "write each ranked layout's scenario (to run alone) into this folder");
  cmd->add_option("--replays", o->search.replays,
                  "replay this many of the best estimates in full (default 32)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100000}));
  cmd->add_option("--per-layout", o->search.per_family,
                  "at most this many replays per parallel layout (tp, pp, dp, cp, ep, zero; "
                  "default 4)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}));
  cmd->add_option("--time-budget", o->search.time_budget_s,
                  "seconds for the whole search (default 60; 0: none); when it runs out the "
                  "report says what it left undone")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--jobs", o->search.jobs, "worker threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
  commands.add(cmd, [o](CommandContext& context) {
    return plan_command(context.registry, *o, context.quiet);
  });
}

}  // namespace bubblesim
