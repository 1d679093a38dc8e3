#pragma once
// `bubblesim plan` (docs/plan.md): the layouts of one training job on one cluster, ranked.
//
//   1. enumerate  every combination of the knobs (plan_axes.h) with dp = GPUs / (tp x pp x cp),
//                 rejecting by rule what cannot divide (GPUs, heads, global batch, layers,
//                 sequence, experts) and what cannot fit (static memory before any activation,
//                 a lower bound from the parameter count), and what the plan's constraints leave
//                 out;
//   2. estimate   the rest, one scenario load per layout x micro-batch x recompute (all its
//                 schedules and bucket sizes at once), in parallel: plan_estimate.h;
//   3. replay     the best estimates (at most `per_family` per parallel layout) in full, each
//                 from its own scenario exactly as `bubblesim run` would run it, in parallel;
//   4. rank       the replays by iteration time (= tokens/s/GPU: every layout has the same batch
//                 and GPUs), with the iteration split by cause and the estimate's error.
//
// Deterministic: the same inputs give the same result whatever the threads, unless the time
// budget stops a phase early, which the result says (time_budget_note).

#include <cstdint>
#include <functional>
#include <string>

#include "schedules/registry.h"
#include "sim/plan/plan_result.h"
#include "sim/plan/plan_spec.h"

namespace bubblesim {

struct PlanOptions {
  int jobs = 0;                       // worker threads; 0 = every hardware thread
  std::int64_t replays = 32;          // the best estimates replayed in full
  std::int64_t per_family = 4;        // at most this many replays per parallel layout
  double time_budget_s = 60.0;        // wall time for the whole search (0: none)
  std::int64_t estimated_shown = 10;  // best estimates without a replay, listed after the ranking
  /// Status lines while it works ("estimate 120/432 ..."); may be empty.
  std::function<void(const std::string&)> progress;
};

/// Runs the search. Throws InputError for a bad plan (located in the plan file).
PlanResult run_plan(const PlanSpec& spec, const Registry& registry, const PlanOptions& options);

}  // namespace bubblesim
