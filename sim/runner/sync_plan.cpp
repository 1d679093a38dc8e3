#include "sim/runner/sync_plan.h"

#include <algorithm>

#include "sim/runner/a2a_plan.h"

namespace bubblesim {
namespace {

/// The engine's end-of-step rules per table stage (data_parallel_engine.h): bucket sizes, when
/// the buckets may start, whether the collective runs, and where the parameter gather runs.
void apply_engine(const ResolvedScenario& resolved, const Table& table, SyncPlan& plan) {
  const ParallelismSpec& par = resolved.scenario->parallelism;
  const DataParallelSemantics& dps = par.data_parallel.semantics;
  const std::int64_t chunks = std::max(table.chunks, 1);
  const auto stages = static_cast<std::size_t>(table.stages);
  plan.end.runs = resolved.sync.end_runs;
  // Without parallelism only the replica sync of a bidirectional schedule runs: 25 MiB buckets
  // during the last backward (docs/parallelism.md, "Replica sync").
  if (!par.enabled) return;
  plan.end.bucket =
      par.data_parallel.bucket.value_or(Bytes(default_bucket_bytes(dps, par.gradient_group())));
  plan.end.last_bucket = Bytes(dps.end.last_bucket_bytes);
  plan.overlap.buckets = dps.end.readiness != BucketReadiness::AfterCompute;
  plan.end.stage_bucket.assign(stages, plan.end.bucket);
  plan.end.ready.assign(stages, SyncPlan::Ready::DuringBackward);
  for (std::size_t s = 0; s < stages; ++s) {
    const std::size_t ps = s / static_cast<std::size_t>(chunks);
    if (dps.end.per_unit && ps < resolved.sync.units.size()) {
      // One reduce-scatter per FSDP unit: the chunk's share of the stage's units.
      const std::int64_t units = std::max<std::int64_t>(1, resolved.sync.units[ps] / chunks);
      plan.end.stage_bucket[s] = Bytes((plan.gradient_bytes[s].count() + units - 1) / units);
    }
    // Megatron buckets pp rank 0's first chunk only, and nothing without overlap_grad_reduce
    // (bucket_size None); with align_grad_reduce (its default) the interleaved schedule launches
    // each chunk's sync after that chunk's last backward.
    const bool bucketed = !dps.end.bucket_first_stage_only ||
                          (s == 0 && dps.end.readiness != BucketReadiness::AfterCompute);
    if (!bucketed) plan.end.stage_bucket[s] = Bytes::zero();
    SyncPlan::Ready ready =
        dps.end.readiness == BucketReadiness::AfterCompute    ? SyncPlan::Ready::AfterCompute
        : dps.end.readiness == BucketReadiness::AfterBackward ? SyncPlan::Ready::AfterBackward
                                                              : SyncPlan::Ready::DuringBackward;
    if (ready == SyncPlan::Ready::DuringBackward && dps.end.bucket_first_stage_only &&
        (!bucketed || chunks > 1))
      ready = SyncPlan::Ready::AfterBackward;
    plan.end.ready[s] = ready;
  }
  switch (dps.gather) {
    case ParameterGather::BehindForward:
      // Megatron's interleaved schedule aligns the gathers at its start (align_param_gather).
      plan.parameter_gather.when = chunks > 1 ? SyncPlan::ParameterGather::When::AtStepStart
                                              : SyncPlan::ParameterGather::When::BeforeFirstForward;
      break;
    case ParameterGather::BehindFill:
      plan.parameter_gather.when = SyncPlan::ParameterGather::When::AtStepStart;
      break;
    default:
      plan.parameter_gather.when = SyncPlan::ParameterGather::When::AfterStep;
      break;
  }
}

}  // namespace

std::shared_ptr<const SyncPlan> make_sync_plan(const ResolvedScenario& resolved,
                                               const Table& table) {
  const Scenario& scenario = *resolved.scenario;
  const SyncCosts& sync = resolved.sync;
  const ParallelismSpec& par = scenario.parallelism;
  if (scenario.communication.kind != CommunicationKind::Topology) return nullptr;
  const auto devices = static_cast<std::size_t>(table.devices);
  auto plan = std::make_shared<SyncPlan>();
  plan->gpus.resize(devices);
  if (par.enabled) {
    if (par.gpus.size() != static_cast<std::size_t>(par.world(scenario.stages))) return nullptr;
    for (std::size_t d = 0; d < devices; ++d) {
      // Every replica of the stage's parameters: the dp ranks and, under context parallelism,
      // their cp ranks (they hold the same parameters and average their gradients).
      for (std::int32_t r = 0; r < par.dp; ++r) {
        for (std::int32_t c = 0; c < par.cp; ++c) {
          std::vector<VertexId> tp;
          for (std::int32_t t = 0; t < par.tp; ++t) {
            tp.push_back(
                par.gpus[par.rank_index(scenario.stages, static_cast<std::int32_t>(d), r, t, c)]);
          }
          plan->gpus[d].push_back(std::move(tp));
        }
      }
    }
  } else {
    // No data or tensor parallelism: only the replica all-reduce of a schedule that holds a
    // stage on two devices, when the stage's gradient bytes are known (docs/parallelism.md).
    const bool replicated = [&] {
      for (std::int32_t s = 0; s < table.stages; ++s)
        if (table.placement.holders_of(s).size() > 1) return true;
      return false;
    }();
    const bool bytes_known = std::any_of(sync.gradient_bytes.begin(), sync.gradient_bytes.end(),
                                         [](Bytes b) { return b > Bytes::zero(); });
    if (!replicated || !bytes_known || scenario.communication.placement.size() != devices)
      return nullptr;
    for (std::size_t d = 0; d < devices; ++d)
      plan->gpus[d].push_back({scenario.communication.placement[d]});
  }
  const std::int64_t chunks = std::max(table.chunks, 1);
  const auto stages = static_cast<std::size_t>(table.stages);
  auto profile = [&](std::size_t s) { return s / static_cast<std::size_t>(chunks); };
  plan->gradient_bytes.resize(stages);
  plan->tp_forward.resize(stages);
  plan->tp_backward.resize(stages);
  for (std::size_t s = 0; s < stages; ++s) {
    const std::size_t ps = profile(s);
    if (ps >= sync.gradient_bytes.size()) return nullptr;
    plan->gradient_bytes[s] = Bytes(sync.gradient_bytes[ps].count() / chunks);
    plan->tp_forward[s] = Time::from_ps(sync.tp_forward[ps].ps() / chunks);
    plan->tp_backward[s] = Time::from_ps(sync.tp_backward[ps].ps() / chunks);
  }
  if (par.tp <= 1) {
    plan->tp_forward.clear();
    plan->tp_backward.clear();
  }
  if (!sync.dp_gather_forward.empty()) {
    // ZeRO 2/3's exposed collectives inside the ops, a chunk's share of its stage's.
    SyncPlan::InOps& z = plan->dp_in_ops;
    for (std::size_t s = 0; s < stages; ++s) {
      const std::size_t ps = profile(s);
      z.gather_forward.push_back(Time::from_ps(sync.dp_gather_forward[ps].ps() / chunks));
      z.gather_backward.push_back(Time::from_ps(sync.dp_gather_backward[ps].ps() / chunks));
      z.reduce_scatter.push_back(Time::from_ps(sync.dp_reduce_scatter[ps].ps() / chunks));
    }
  }
  plan->optimizer.assign(devices, Time::zero());
  if (!sync.parameter_gather.empty())
    plan->parameter_gather.per_device.assign(devices, Time::zero());
  const auto held = table.placement.stages_by_device(table.devices);
  // Megatron's interleaved schedule dispatches the first chunks' gathers at its start and every
  // later chunk's ahead of its first forward (schedules.py, param_sync_func): only a device's
  // first chunk waits.
  const bool first_chunk_only = par.data_parallel.semantics.engine == DataParallelEngine::Megatron;
  for (std::size_t d = 0; d < devices; ++d) {
    bool first = true;
    for (std::int32_t s : held[d]) {
      const std::size_t ps = profile(static_cast<std::size_t>(s));
      plan->optimizer[d] += Time::from_ps(sync.optimizer[ps].ps() / chunks);
      if (!sync.parameter_gather.empty() && (first || !first_chunk_only))
        plan->parameter_gather.per_device[d] +=
            Time::from_ps(sync.parameter_gather[ps].ps() / chunks);
      first = false;
    }
  }
  if (!sync.expert_gradient_bytes.empty() && par.enabled) {
    // The routed experts' gradients: per table stage, and per device its expert groups.
    plan->experts.gradient_bytes.resize(stages);
    for (std::size_t s = 0; s < stages; ++s)
      plan->experts.gradient_bytes[s] =
          Bytes(sync.expert_gradient_bytes[profile(s)].count() / chunks);
    plan->experts.groups.resize(devices);
    for (std::size_t d = 0; d < devices; ++d) {
      for (std::int32_t e = 0; e < std::max(par.ep, 1); ++e) {
        std::vector<VertexId> group;
        for (std::size_t i : par.expert_group(scenario.stages, static_cast<std::int32_t>(d), e))
          group.push_back(par.gpus[i]);
        plan->experts.groups[d].push_back(std::move(group));
      }
    }
  }
  plan->end.kind = sync.gradient_collective;
  apply_engine(resolved, table, *plan);
  // With expert parallelism the share is the all-to-all's (docs/moe.md), whose exchange runs the
  // MoE ops; the buckets' SMs are modelled without it (docs/parallelism.md).
  plan->overlap.sm_share = par.ep > 1 ? 0.0 : par.overlap.comm_sm_fraction;
  plan->collective.algorithm = par.data_parallel.algorithm;
  plan->collective.ring_steps = par.data_parallel.ring_steps;
  plan->replica_sync = par.data_parallel.replica_sync;
  plan->tp_summaries = sync.tp_summaries;
  std::vector<StageCost> costs = resolved.costs.for_table(static_cast<int>(chunks));
  if (costs.size() == stages && std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
        return c.moe.a2a_forward + c.moe.a2a_backward + c.moe.experts.load.forward > Time::zero();
      }))
    plan->a2a_costs = std::move(costs);
  plan->a2a_as_flows = a2a_as_flows(scenario);
  return plan;
}

}  // namespace bubblesim
