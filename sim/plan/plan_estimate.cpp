#include "sim/plan/plan_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/engine/engine.h"
#include "sim/runner/collective_options.h"
#include "sim/runner/sync_plan.h"
#include "sim/runner/table_costs.h"

namespace bubblesim {
namespace {

// An input error of one schedule, by rule: the static memory over its budget, a chunk count the
// layers cannot fill, or something else the scenario refuses.
ScheduleEstimate rejected(const InputError& e) {
  ScheduleEstimate out;
  const Diagnostic& d = e.diagnostics().front();
  out.reason = d.message;
  if (d.key_path.rfind("memory", 0) == 0 || d.key_path.rfind("cluster.gpu", 0) == 0) {
    out.rejection = PlanRejection::Memory;
  } else if (d.key_path == "schedules" && d.message.find("layers") != std::string::npos) {
    out.rejection = PlanRejection::Divisibility;
  } else {
    out.rejection = PlanRejection::Invalid;
  }
  return out;
}

// Per table stage, the last op that finishes its weight gradients: its last W where the table
// splits the backward, else its last B or fused F&B (the engine releases the stage's buckets
// through that op, docs/parallelism.md). Stages whose op never ran keep a zero window.
std::vector<OpTiming> last_gradient_ops(const Table& table, const SimulationResult& replay) {
  std::vector<OpTiming> out(static_cast<std::size_t>(table.stages),
                            OpTiming{Time::zero(), Time::zero()});
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    const auto& ops = table.device_ops[d];
    const bool split =
        std::any_of(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Weight; });
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpKind k = ops[i].kind;
      const bool grad =
          split ? k == OpKind::Weight : k == OpKind::Backward || k == OpKind::ForwardBackward;
      // A fused F&B finishes the gradients of its backward's stage.
      const std::int32_t stage =
          k == OpKind::ForwardBackward ? ops[i].backward_stage : ops[i].stage;
      if (!grad || stage < 0 || stage >= table.stages) continue;
      OpTiming& last = out[static_cast<std::size_t>(stage)];
      if (replay.timings[d][i].end >= last.end) last = replay.timings[d][i];
    }
  }
  return out;
}

// Per device, what it holds of a per-stage quantity of the profile (each table stage's share of
// its profile stage: a stage of v chunks holds 1/v of it), as sync_plan.cpp counts it.
std::vector<double> per_device(const Table& table, const std::vector<double>& per_stage) {
  std::vector<double> out(static_cast<std::size_t>(table.devices), 0.0);
  if (per_stage.empty()) return out;
  const std::int64_t chunks = std::max(table.chunks, 1);
  const auto held = table.placement.stages_by_device(table.devices);
  for (std::size_t d = 0; d < out.size(); ++d) {
    for (std::int32_t s : held[d]) {
      const auto ps = static_cast<std::size_t>(s / chunks);
      if (ps < per_stage.size()) out[d] += per_stage[ps] / static_cast<double>(chunks);
    }
  }
  return out;
}

template <typename T, typename F>
std::vector<double> as_doubles(const std::vector<T>& values, F convert) {
  std::vector<double> out;
  for (const T& v : values) out.push_back(convert(v));
  return out;
}

// The stage-to-stage transfers on the critical path: the warm-up's forwards and the cool-down's
// backwards cross every boundary of the p x v virtual stages once each way.
double transfer_seconds(const ResolvedScenario& r, const Table& table) {
  const std::size_t p = r.costs.stages.size();
  if (p < 2 || r.routes.bandwidth.size() < 2 * p) return 0.0;
  double hop = 0.0;
  std::size_t hops = 0;
  for (std::size_t a = 0; a + 1 < p; ++a) {
    const double bw = r.routes.bandwidth[2 * a].bytes_per_second();
    if (!(bw > 0)) continue;
    hop += r.costs.stages[a].p2p.as_double() / bw + r.routes.latency[2 * a].seconds();
    ++hops;
  }
  if (hops == 0) return 0.0;
  const double boundaries = static_cast<double>(p) * std::max(table.chunks, 1) - 1.0;
  return 2.0 * boundaries * hop / static_cast<double>(hops);
}

}  // namespace

SyncEstimator::SyncEstimator(const ResolvedScenario& resolved) : resolved_(&resolved) {
  const Scenario& sc = *resolved.scenario;
  const ParallelismSpec& par = sc.parallelism;
  if (!par.enabled || resolved.sync.gradient_bytes.empty() || !sc.communication.topology ||
      par.gpus.size() != static_cast<std::size_t>(par.world(sc.stages)))
    return;
  if (par.gradient_group() <= 1) return;
  // The replay's own planner: the same algorithm choice (NCCL's tuning model where it runs),
  // channels and prediction as the engine's gradient sync (sim/engine/collective_plan.h).
  planner_ =
      std::make_unique<CollectivePlanner>(*sc.communication.topology, collective_options(sc));
  for (std::int32_t d = 0; d < sc.stages; ++d) {
    std::vector<VertexId> group;
    for (std::int32_t r = 0; r < par.dp; ++r)
      for (std::int32_t c = 0; c < par.cp; ++c)
        group.push_back(par.gpus[par.rank_index(sc.stages, d, r, 0, c)]);
    groups_.push_back(std::move(group));
  }
}

SyncEstimator::~SyncEstimator() = default;

double SyncEstimator::bucket_seconds(std::size_t device, double bytes) const {
  if (!planner_ || device >= groups_.size() || !(bytes > 0)) return 0.0;
  const auto key = std::make_pair(device, bytes);
  if (auto it = seconds_.find(key); it != seconds_.end()) return it->second;
  const double s = planner_->plan(groups_[device], resolved_->sync.gradient_collective, bytes)
                       .predicted.seconds();
  seconds_.emplace(key, s);
  return s;
}

ScheduleEstimate estimate_schedule(const ResolvedScenario& resolved, const Generator& generator,
                                   const ScheduleRequest& request, const SyncEstimator& sync,
                                   const std::vector<double>& buckets) {
  const Scenario& sc = *resolved.scenario;
  ScheduleRun run;
  try {
    run.table = generate_table(resolved, generator, request);
    run.stage_costs = table_costs(resolved, run.table.chunks, request);
    apply_schedule_passes(resolved, generator, request, run);
  } catch (const InfeasibleScheduleError& e) {
    return {PlanRejection::Infeasible, e.outcome().summary(), 0, {}};
  } catch (const InputError& e) {
    return rejected(e);
  }
  const SimulationResult ideal =
      simulate(make_engine_input(resolved, run.table, run.stage_costs, Replay::Idealized));
  ScheduleEstimate out;
  // Memory: the idealized replay's peaks against each device's budget.
  const std::vector<Bytes>& peaks = ideal.metrics.memory.peak_memory_per_device;
  double peak = 0.0;
  for (std::size_t d = 0; d < peaks.size(); ++d) {
    peak = std::max(peak, peaks[d].as_double());
    if (d < resolved.memory_budget.size() && peaks[d] > resolved.memory_budget[d]) {
      out.rejection = PlanRejection::Memory;
      out.over_budget_bytes = (peaks[d] - resolved.memory_budget[d]).as_double();
      out.reason = fmt::format(
          "estimated peak {:.1f} GiB on device {} (static {:.1f} GiB + activations) over the "
          "{:.1f} GiB budget",
          to_gib(peaks[d].as_double()), d,
          to_gib(peaks[d].as_double() -
                 ideal.metrics.memory.peak_activation_per_device[d].as_double()),
          to_gib(resolved.memory_budget[d].as_double()));
      return out;
    }
  }
  const Table& table = run.table;
  const std::vector<OpTiming> last = last_gradient_ops(table, ideal);
  const auto held = table.placement.stages_by_device(table.devices);
  // The data-parallel engine's own rules for this table, as the replay gets them
  // (sim/runner/sync_plan.cpp): whether an end-of-step collective runs, each stage's buckets,
  // when they may start, and where the parameter all-gather sits.
  const std::shared_ptr<const SyncPlan> plan =
      sync.any() ? make_sync_plan(resolved, table) : nullptr;
  const bool end_runs = plan && plan->end.runs;
  // The optimizer step of each device, with the gather that follows it where the engine runs it
  // there (the next iteration starts after both, sim/engine/iteration_end.cpp).
  std::vector<double> step =
      per_device(table, as_doubles(resolved.optimizer_step, [](Time t) { return t.seconds(); }));
  double gather_delay = 0.0;  // a gather before the first forward holds the pipeline's start
  if (plan && !plan->parameter_gather.per_device.empty()) {
    for (std::size_t d = 0; d < plan->parameter_gather.per_device.size(); ++d) {
      const double gather = plan->parameter_gather.per_device[d].seconds();
      const double first =
          ideal.timings[d].empty() ? 0.0 : ideal.timings[d].front().start.seconds();
      switch (plan->parameter_gather.when) {
        case SyncPlan::ParameterGather::When::AfterStep:
          if (d < step.size()) step[d] += gather;
          break;
        case SyncPlan::ParameterGather::When::BeforeFirstForward:
          gather_delay = std::max(gather_delay, gather);
          break;
        case SyncPlan::ParameterGather::When::AtStepStart:  // the fill hides what it can
          gather_delay = std::max(gather_delay, gather - first);
          break;
      }
    }
  }
  const double p2p = transfer_seconds(resolved, table);
  const double barrier =
      sc.iteration.barrier == IterationBarrier::Global ? resolved.barrier.seconds() : 0.0;
  for (double bucket : buckets) {
    PlanEstimate e;
    e.pipeline_s = ideal.metrics.makespan.seconds() + gather_delay;
    e.peak_memory_bytes = peak;
    e.p2p_s = p2p;
    double ready = 0.0, slowest_step = 0.0;
    for (std::size_t d = 0; d < static_cast<std::size_t>(table.devices); ++d) {
      double compute_end = 0.0;
      for (const OpTiming& t : ideal.timings[d])
        compute_end = std::max(compute_end, t.end.seconds());
      compute_end += gather_delay;
      // Each stage's buckets become ready as the engine releases them: through its last
      // gradient op, after it, or after the device's last compute op; the device's collectives
      // run one after another.
      std::vector<std::pair<double, double>> buckets_ready;  // ready time, bytes
      for (std::int32_t s : end_runs ? held[d] : std::vector<std::int32_t>{}) {
        const auto ts = static_cast<std::size_t>(s);
        const double bytes =
            ts < plan->gradient_bytes.size() ? plan->gradient_bytes[ts].as_double() : 0.0;
        if (!(bytes > 0)) continue;
        // The candidate's bucket, unless the engine sizes this stage's buckets itself (one per
        // FSDP unit, or Megatron's single bucket beyond its first stage).
        double size = bucket;
        if (ts < plan->end.stage_bucket.size() && plan->end.stage_bucket[ts] != plan->end.bucket)
          size = plan->end.stage_bucket[ts].as_double();
        if (!(size > 0)) size = bytes;
        std::vector<double> parts;
        const double small = plan->end.last_bucket.as_double();
        const double body = small > 0 && bytes > small ? bytes - small : bytes;
        const auto k = static_cast<std::int64_t>(std::ceil(body / size));
        for (std::int64_t i = 0; i < k; ++i)
          parts.push_back(std::min(size, body - static_cast<double>(i) * size));
        if (body < bytes) parts.push_back(small);
        const SyncPlan::Ready when =
            ts < plan->end.ready.size() ? plan->end.ready[ts] : SyncPlan::Ready::AfterCompute;
        const OpTiming& w = last[ts];
        for (std::size_t i = 0; i < parts.size(); ++i) {
          const double fraction = static_cast<double>(i + 1) / static_cast<double>(parts.size());
          const double at =
              when == SyncPlan::Ready::AfterCompute ? compute_end
              : when == SyncPlan::Ready::AfterBackward
                  ? w.end.seconds() + gather_delay
                  : w.start.seconds() + gather_delay + (w.end - w.start).seconds() * fraction;
          buckets_ready.emplace_back(at, parts[i]);
        }
      }
      std::stable_sort(buckets_ready.begin(), buckets_ready.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      double t = compute_end, free = 0.0;
      for (const auto& [at, bytes] : buckets_ready) {
        free = std::max(free, at) + sync.bucket_seconds(d, bytes);
        t = std::max(t, free);
      }
      e.sync_exposed_s = std::max(e.sync_exposed_s, t - compute_end);
      ready = std::max(ready, t);
      slowest_step = std::max(slowest_step, d < step.size() ? step[d] : 0.0);
    }
    e.step_s = slowest_step;
    const double end = ready + slowest_step;
    e.iteration_s = end + barrier + p2p;
    out.per_bucket.push_back(e);
  }
  return out;
}

}  // namespace bubblesim
