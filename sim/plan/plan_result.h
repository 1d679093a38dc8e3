#pragma once
// What `bubblesim plan` found (docs/plan.md): every candidate layout it enumerated with its
// fate (rejected and why, estimated, replayed), the replayed ones ranked, and the families of
// layouts that had no valid candidate with the reason. Plain data; plan.h fills it and
// plan_report.h writes it as text, Markdown, CSV, JSON and HTML.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/plan/plan_axes.h"
#include "sim/report/idle_split_report.h"

namespace bubblesim {

/// Bytes in GiB, for the reasons and reports.
inline double to_gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/// Why a candidate left the search before its replay, by rule.
enum class PlanRejection {
  None,          // estimated (and maybe replayed)
  Divisibility,  // GPUs, heads, batch, layers or sequence do not divide
  Memory,        // static memory or the estimated peak over the budget
  Infeasible,    // the schedule's generator cannot build this shape
  Invalid,       // the scenario refuses the combination (its message says why)
  NotEvaluated,  // the time budget ran out first
};
std::string_view plan_rejection_name(PlanRejection r);  // "divisibility", "memory", ...

/// The fast estimate of one candidate (plan_estimate.h).
struct PlanEstimate {
  double iteration_s = 0;        // the idealized replay plus the end of the iteration
  double pipeline_s = 0;         // the idealized replay's makespan (compute and bubbles)
  double sync_exposed_s = 0;     // gradient sync past the last backward (largest device)
  double step_s = 0;             // the slowest device's optimizer step
  double p2p_s = 0;              // the pipeline's transfers on the critical path
  double peak_memory_bytes = 0;  // largest over devices (static + activations)
};

/// The full replay of one candidate's scenario (plan_replay.h), as `bubblesim run` makes it.
/// Its iteration split by cause (IterationParts, sim/report/idle_split_report.h): seconds per
/// iteration that sum to iteration_s.
struct PlanReplay : IterationParts {
  std::string status;   // ok, out_of_memory, deadlock, infeasible, invalid
  std::string failure;  // the reason when not ok
  double iteration_s = 0;
  std::optional<double> tokens_per_s_per_gpu, mfu, model_tflops_per_gpu;
  double peak_memory_bytes = 0;
  double memory_budget_bytes = 0;  // the smallest device budget (0: none)
};

struct PlanCandidate {
  /// Per knob of plan_axes(): its value ("" where it does not apply).
  std::vector<std::string> values;
  LayoutDegrees degrees;  // tp, pp, cp, ep, dp, zero (0 where it does not apply), micro-batch
  std::string schedule;   // the schedule's label ("interleaved-1f1b(chunks=2)")
  std::string family;     // the parallel layout: "tp4 pp8 dp8 zero1"
  std::string variant;    // the knobs inside the family: "mbs1 full" (plan_axes.h labels)
  std::string label;      // the whole candidate: family, variant, schedule
  PlanRejection rejection = PlanRejection::None;
  std::string reason;            // why it was rejected
  double over_budget_bytes = 0;  // memory rejections: by how much (the nearest is reported)
  std::optional<PlanEstimate> estimate;
  std::optional<PlanReplay> replay;
  std::string scenario_yaml;  // its scenario, to run alone (replayed candidates)
};

/// A family (parallel layout) none of whose candidates was estimated.
struct PlanRejectedFamily {
  std::string family;
  PlanRejection rejection = PlanRejection::None;
  std::string reason;  // the closest candidate's reason (the one nearest to fitting)
  std::int64_t candidates = 0;
};

/// How the estimate agreed with the replays.
struct PlanAgreement {
  double median_abs_error = 0;  // |estimate - replay| / replay, over the replayed ok candidates
  double max_abs_error = 0;
  double rank_correlation = 0;  // Spearman's rho between the two orders
  std::int64_t samples = 0;
};

/// The job a plan ranks layouts for, as read from its base scenario.
struct PlanJobSummary {
  std::string name, file;
  std::int64_t gpus = 0, gpus_per_node = 0, global_batch = 0, seq_len = 0;
  std::string model, gpu;
};

/// Wall seconds of each phase (not part of the deterministic output).
struct PlanTimes {
  double enumerate_s = 0, estimate_s = 0, replay_s = 0, total_s = 0;
};

struct PlanResult {
  PlanJobSummary job;
  /// The searched values of every knob, as used.
  std::vector<std::vector<std::string>> search;
  std::vector<PlanCandidate> candidates;    // in enumeration order
  std::vector<std::size_t> ranked;          // replayed ok candidates, fastest first
  std::vector<std::size_t> failed;          // replayed, not ok
  std::vector<std::size_t> estimated_only;  // the best estimates not replayed
  std::vector<PlanRejectedFamily> rejected_families;
  PlanAgreement agreement;
  std::int64_t excluded_by_constraints = 0;  // combinations the plan's constraints left out
  std::int64_t loads = 0;  // scenarios loaded and resolved (one per family x micro-batch x ...)
  /// What the time budget cut ("" when it cut nothing: the result is then deterministic).
  std::string time_budget_note;
  PlanTimes times;
};

}  // namespace bubblesim
