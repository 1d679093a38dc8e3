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
//                  compute op); the device's buckets run one after another, each the
//                  replay's prediction of its collective over the gradient group (NCCL's
//                  tuning model where it runs, else the alpha-beta closed form over the
//                  channels: sim/engine/collective_plan.h). The engine's rules come from the same
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

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/collective_plan.h"
#include "sim/plan/plan_result.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// What one schedule's estimate needs from the scenario, computed once per resolved scenario:
/// per pipeline device its gradient group and the replay's collective planner over them.
class SyncEstimator {
 public:
  explicit SyncEstimator(const ResolvedScenario& resolved);
  ~SyncEstimator();
  SyncEstimator(const SyncEstimator&) = delete;
  SyncEstimator& operator=(const SyncEstimator&) = delete;
  /// Seconds of one bucket of `bytes` over device d's gradient group as the replay's planner
  /// predicts it (0 without a group). Not thread-safe: one estimator per thread.
  double bucket_seconds(std::size_t device, double bytes) const;
  bool any() const { return planner_ != nullptr; }

 private:
  const ResolvedScenario* resolved_;
  std::unique_ptr<CollectivePlanner> planner_;
  std::vector<std::vector<VertexId>> groups_;  // per pipeline device, its gradient group
  mutable std::map<std::pair<std::size_t, double>, double> seconds_;
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
