#pragma once
// PlanSpec: what `bubblesim plan` is asked (docs/plan.md), read from a plan file:
//
//   name: llama3-70b-256
//   model: {preset: llama3-70b, seq_len: 8192}           # the scenario sections every layout
//   cluster: {gpu: {preset: h100-sxm}}                   # shares: model, cluster, topology,
//   topology: {builder: multi-node, nodes: 32, gpus_per_node: 8}   # training, memory, ...
//   training: {global_batch: 512}
//   search:                                  # optional: the values to try (plan_axes.h)
//     tp: [1, 2, 4, 8]
//     zero: [1, 3]
//     schedules: [1f1b, zb-v]
//     constraints: ["tp * pp <= 64"]        # over tp, pp, dp, cp, ep, zero, micro_batch_size
//
// or from command-line flags (a model preset, a GPU preset, nodes x GPUs per node of the
// multi-node builder, a global batch and a sequence length). A knob the base sets (`parallelism:
// {tp: 4}`) is fixed at that value; the GPU count fixes dp, and the global batch the
// microbatches, so `parallelism.dp` and `pipeline.microbatches` are refused.

#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/sweep/key_expression.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {

struct PlanSpec {
  std::string name;
  std::string file;      // the plan file ("<flags>" for the command-line form)
  std::string base_dir;  // relative files of the base resolve against it
  std::string text;      // the plan's YAML (the file's bytes, or what the flags make)
  YAML::Node document;   // parsed, with positions, for locating errors
  YAML::Node base;       // the scenario sections every candidate shares (searched keys removed)
  /// Per knob of plan_axes(): the values given (search: or a fixed base key), as YAML text in
  /// flow style; empty = the knob's defaults.
  std::vector<std::vector<std::string>> values;
  /// Per knob: where its values were given (for errors about them).
  std::vector<SourceLocation> where;
  std::vector<std::shared_ptr<const KeyExpression>> constraints;
  std::vector<SourceLocation> constraint_where;
};

/// Reads and checks a plan file (InputError with file:line:column on problems).
PlanSpec load_plan_file(const std::string& path);
/// The same from YAML text named `name`, relative files against `base_dir`.
PlanSpec load_plan_string(const std::string& text, const std::string& name,
                          const std::string& base_dir);

/// The command-line form: `bubblesim plan --model M --gpu G --nodes N --gpus-per-node K
/// --global-batch B --seq-len S` (a topology file instead of nodes with `topology`).
struct PlanFlags {
  std::string model, gpu, topology;
  std::int64_t nodes = 0, gpus_per_node = 8, global_batch = 0, seq_len = 0;
};
PlanSpec plan_from_flags(const PlanFlags& flags);

}  // namespace bubblesim
