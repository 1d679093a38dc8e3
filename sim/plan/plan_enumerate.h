#pragma once
// The first phase of `bubblesim plan` (plan.h): what the base scenario says about the job (its
// GPUs, model, batch, memory budget), the candidates every knob combination makes, and the rules
// that reject a candidate before anything is loaded (divisibility, a static-memory lower bound,
// the plan's constraints). Also the scenario text of a candidate, shared with the later phases.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/plan/plan_axes.h"
#include "sim/plan/plan_result.h"
#include "sim/plan/plan_spec.h"

namespace bubblesim {

/// PlanContext plus what the memory bound and the reports need.
struct PlanJob {
  PlanContext context;
  double parameters = 0;  // of the whole model
  std::int64_t dtype_bytes = 2;
  double memory_budget = 0;  // bytes per GPU (the smallest device budget); 0 = none
  std::string model, gpu;
};

/// Reads the job from the plan's base with a neutral layout (one stage, no data parallelism):
/// errors there are the plan file's own, located in it.
PlanJob read_plan_job(const PlanSpec& spec, const Registry& registry);

/// Per knob, the values searched: the plan's, else the defaults for this job.
std::vector<std::vector<std::string>> searched_values(const PlanSpec& spec, const PlanJob& job);

/// One scenario load of the estimate: a layout with its micro-batch, recompute and sp, and the
/// candidates it holds (per schedule, per bucket; indices into PlanResult::candidates).
struct PlanLoadUnit {
  std::vector<std::string> values;  // the knobs of stages Layout and Load ("" = not applied)
  LayoutDegrees degrees;
  std::vector<std::string> schedules;               // YAML entries
  std::vector<std::string> buckets;                 // "" alone when no bucket applies
  std::vector<std::vector<std::size_t>> candidate;  // [schedule][bucket]
};

/// Every candidate of the search (in `result.candidates`, rejected ones with their reason) and
/// the load units of those that pass the rules.
std::vector<PlanLoadUnit> enumerate_candidates(const PlanSpec& spec, const PlanJob& job,
                                               const std::vector<std::vector<std::string>>& search,
                                               PlanResult& result);

/// The scenario of a candidate (or of a load unit): the base with the knobs' keys, dp, balanced
/// layers, the schedules and, when given, the bucket.
std::string candidate_scenario(const PlanSpec& spec, const std::vector<std::string>& values,
                               const LayoutDegrees& degrees,
                               const std::vector<std::string>& schedules,
                               const std::string& bucket);

}  // namespace bubblesim
