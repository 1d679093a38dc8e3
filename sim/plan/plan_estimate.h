#pragma once
// The plan's fast estimate of one schedule of a loaded, resolved scenario (docs/plan.md,
// "Estimate"): the table generated and passed through the memory passes as `run` does, replayed
// once idealized (the per-stage costs with TP, CP, ZeRO-3 and all-to-all time inside the ops, no
// transfers: the table level of a report), and the end of the iteration added in closed form:
//
//   per device d   where the data-parallel engine runs an end-of-step collective (not under
//                  ZeRO 2/3, whose reduce-scatters sit inside the ops), the buckets of each
//                  table stage it holds, sized as the engine sizes them (the candidate's
//                  bucket, one per FSDP unit, DDP's small last bucket, Megatron's one bucket
//                  beyond its first stage), become ready when the engine releases them (through
//                  the stage's last weight-gradient op, after it, or after the device's last
//                  compute op); the device's buckets run one after another, each the alpha-beta
//                  closed form of its collective over the gradient group (measured on the
//                  topology: sim/engine/collectives.h). The engine's rules come from the same
//                  SyncPlan the replay gets (sim/runner/sync_plan.h).
//   parameters     a gather before the first forward delays the whole pipeline by its exposed
//                  part; one after the optimizer step adds to that step
//   iteration      the last device's sync end + the global barrier + the slowest optimizer step
//                  (the iteration's path in the engine: sim/engine/iteration_end.cpp) + the
//                  stage-to-stage transfers of the warm-up and cool-down (2 (p v - 1) hops at
//                  the neighbour route's bandwidth and latency)
//
// and the peak memory of the idealized replay (static + activations, per device). What it
// leaves out, the replay has: contention between flows, the transfers' own timing, the SMs the
// collectives take from compute.

#include <optional>
#include <string>
#include <vector>

#include "sim/plan/plan_result.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// What one schedule's estimate needs from the scenario, computed once per resolved scenario:
/// per pipeline device the alpha-beta closed form's link parameters over its gradient group.
class SyncEstimator {
 public:
  explicit SyncEstimator(const ResolvedScenario& resolved);
  /// Seconds of one bucket of `bytes` over device d's gradient group (0 without a group).
  double bucket_seconds(std::size_t device, double bytes) const;
  bool any() const { return ranks_ > 1; }

 private:
  const ResolvedScenario* resolved_;
  std::int32_t ranks_ = 1;
  std::vector<std::int32_t> nodes_;
  std::vector<AlphaBeta> links_;
};

/// The outcome of estimating one schedule: the estimate per bucket size, or why there is none.
struct ScheduleEstimate {
  PlanRejection rejection = PlanRejection::None;
  std::string reason;
  double over_budget_bytes = 0;          // a memory rejection's excess
  std::vector<PlanEstimate> per_bucket;  // parallel to the bucket sizes asked for
};

/// Estimates `request` of the resolved scenario for each gradient bucket of `buckets` (bytes).
/// Never throws for the candidate's own problems: they come back as the rejection.
ScheduleEstimate estimate_schedule(const ResolvedScenario& resolved, const Generator& generator,
                                   const ScheduleRequest& request, const SyncEstimator& sync,
                                   const std::vector<double>& buckets);

}  // namespace bubblesim
