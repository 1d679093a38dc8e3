#pragma once
// The knobs `bubblesim plan` searches, as one table (docs/plan.md): each names its `search:` key,
// the scenario key it sets in every candidate, when it applies, its default values and when in
// the search it acts. A new knob (for example a data-parallel engine) is one entry here; the
// enumeration, the candidate scenarios, the labels and the reports follow the table.
//
// The data-parallel degree is not a knob: it is what the GPUs leave, dp = GPUs / (tp x pp x cp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

/// What a plan knows about its job once the base scenario has been read: the numbers the
/// defaults and the divisibility rules need.
struct PlanContext {
  std::int64_t gpus = 0;           // GPUs of the topology
  std::int64_t gpus_per_node = 0;  // GPUs sharing a host (the node's NVLink domain)
  std::int64_t layers = 0;
  std::int64_t heads = 0, kv_heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t experts = 0;         // routed experts of a MoE model; 0 = dense
  bool context_parallel_ok = true;  // FlashAttention, no MLA, no MoE (docs/parallelism.md)
  std::int64_t global_batch = 0;    // sequences per optimizer step
};

/// When a knob acts: it shapes the parallel layout (and the GPU arithmetic), it needs a scenario
/// of its own (new stage costs), it is applied to a loaded scenario (costs unchanged), or it is
/// one of the schedules a loaded scenario runs.
enum class AxisStage { Layout, Load, Bucket, Schedule };

/// The degrees and settings a rule may look at, by name; -1 where the knob does not apply.
struct LayoutDegrees {
  std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, dp = 1, zero = 0, micro_batch_size = 1;
};

struct PlanAxis {
  std::string_view name;  // the `search:` key: tp, pp, ...
  std::string_view key;   // the scenario key it sets: parallelism.tp, ...
  AxisStage stage;
  std::string_view help;  // one line for docs and errors
  /// Its values when the plan gives none (YAML scalars in flow style).
  std::vector<std::string> (*defaults)(const PlanContext&);
  /// Whether it applies to a layout (a knob that does not is left out of the scenario, its
  /// default in force, and of the label).
  bool (*applies)(const LayoutDegrees&);
  /// How a value reads in a candidate's label ("mbs2", "full", "bucket 100MiB"); knobs of the
  /// layout (tp ... zero) are named by the family instead (plan_result.h).
  std::string (*label)(const std::string& value);
  /// Whether the label names it even when the plan tries one value.
  bool always_labelled = false;
};

/// Every knob, in enumeration order (slowest first).
const std::vector<PlanAxis>& plan_axes();
/// Its index in plan_axes(), or -1.
int plan_axis_index(std::string_view name);

/// "interleaved-1f1b(chunks=2)" for the schedule entry {name: interleaved-1f1b, params: {chunks:
/// 2}} (the run's label for non-default parameters); a plain name as it is.
std::string schedule_entry_label(const std::string& entry);

/// The YAML (flow style) that knob `axis` writes at its key for `value` (a recompute policy name
/// becomes {policy: NAME}; other values are written as given).
std::string plan_axis_yaml(const PlanAxis& axis, const std::string& value);

}  // namespace bubblesim
