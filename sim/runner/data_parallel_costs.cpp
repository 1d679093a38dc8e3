#include "sim/runner/data_parallel_costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/collective_plan.h"

namespace bubblesim {
namespace {

/// One FSDP unit's parameters and, of them, its linear-layer weights.
struct UnitParams {
  double params = 0, linear = 0;
};

/// The stage's FSDP units in forward order: its embedding, each layer, its head (as
/// sharded_stage.cpp times them).
std::vector<UnitParams> unit_parameters(const StageUnits& u) {
  std::vector<UnitParams> out;
  if (u.embedding > 0) out.push_back({u.embedding, 0});
  for (std::int64_t i = 0; i < u.layer_count; ++i) {
    const double n = u.layers / static_cast<double>(u.layer_count);
    out.push_back({n, std::max(0.0, n - u.norm_per_layer)});
  }
  if (u.head > 0) out.push_back({u.head, 0});
  return out;
}

/// The stage's linear-layer weights on one GPU, gathered as FP8 under fp8_param_gather: its
/// parameters less the embedding, the LM head (torchao and Transformer Engine keep both in
/// bf16) and the layers' norms.
double linear_parameters(const Scenario& sc, const StageBreakdown& b) {
  const TransformerModel& m = *sc.model;
  const double vh = static_cast<double>(m.embedding.vocab) * static_cast<double>(m.hidden) /
                    static_cast<double>(std::max(sc.parallelism.tp, 1));
  double rest = static_cast<double>(b.layers) * static_cast<double>(m.hidden) * (m.bias ? 4 : 2);
  if (b.embedding) rest += vh;
  if (b.lm_head) rest += vh + static_cast<double>(m.hidden);
  return std::max(0.0, b.parameters_per_gpu - b.expert_parameters_per_gpu - rest);
}

/// A gather of `units` equal pieces of `piece` seconds each before a forward of `compute`
/// seconds: the first piece waits, each later one runs while the unit before it computes.
double prefetched(double piece, double compute, std::int64_t units) {
  const auto k = static_cast<double>(std::max<std::int64_t>(units, 1));
  return piece + (k - 1.0) * std::max(0.0, piece - compute / k);
}

/// One line of the collectives table for a per-microbatch collective of every unit of a stage.
CollectiveSummary per_op_summary(std::string name, std::int32_t ranks,
                                 const std::vector<double>& unit_bytes, CollectiveKind kind,
                                 std::int32_t stage, const DataParallelTimer& timer) {
  CollectiveSummary c{
      std::move(name), "",           ranks,       static_cast<std::int32_t>(unit_bytes.size()),
      Bytes::zero(),   Time::zero(), Time::zero()};
  double bytes = 0, bus = 0;
  std::vector<std::string> algorithms;  // each once, in the order the units first ran them
  for (double b : unit_bytes) {
    const CollectiveTiming t = timer.shard_group(stage, kind, b);
    bytes += b;
    bus += bus_bytes(kind, b, ranks);
    c.simulated += t.simulated;
    c.closed_form += t.closed_form;
    const std::string a = t.algorithm.empty() ? std::string("ring") : t.algorithm;
    if (std::find(algorithms.begin(), algorithms.end(), a) == algorithms.end())
      algorithms.push_back(a);
  }
  for (const std::string& a : algorithms) c.algorithm += (c.algorithm.empty() ? "" : ", ") + a;
  c.bytes = Bytes(static_cast<std::int64_t>(bytes));
  if (c.simulated > Time::zero()) c.bus_bandwidth = bus / c.simulated.seconds();
  return c;
}

/// The per-microbatch collectives of stage `s` (ZeRO 2/3 inside its ops) for the report: each
/// unit's all-gather before F and B and reduce-scatter after B, summed over the units.
void add_per_op_summaries(const Scenario& sc, const StageUnits& stage_units, std::int32_t s,
                          const DataParallelTimer& timer, std::vector<CollectiveSummary>& out) {
  const ParallelismSpec& par = sc.parallelism;
  const DataParallelSemantics& dps = par.data_parallel.semantics;
  const std::vector<UnitParams> units = unit_parameters(stage_units);
  if (units.empty()) return;
  std::vector<double> gathered, reduced;
  for (const UnitParams& u : units) {
    const double fp8 = dps.fp8_param_gather ? u.linear : 0.0;
    gathered.push_back((u.params - fp8) * dps.gather_bytes + fp8);
    reduced.push_back(u.params * dps.reduce_bytes);
  }
  const std::int32_t ranks = par.shard_group();
  if (dps.per_microbatch.gather_forward)
    out.push_back(per_op_summary(fmt::format("dp all-gather stage {} (per F op)", s), ranks,
                                 gathered, CollectiveKind::AllGather, s, timer));
  if (dps.per_microbatch.gather_backward) {
    // The backward's first unit stays gathered from the forward (FSDP keeps the root).
    gathered.pop_back();
    out.push_back(per_op_summary(fmt::format("dp all-gather stage {} (per B op)", s), ranks,
                                 gathered, CollectiveKind::AllGather, s, timer));
  }
  if (dps.per_microbatch.reduce_scatter)
    out.push_back(per_op_summary(fmt::format("dp reduce-scatter stage {} (per B op)", s), ranks,
                                 reduced, CollectiveKind::ReduceScatter, s, timer));
}

}  // namespace

void resolve_data_parallel(const Scenario& sc, ResolvedScenario& r,
                           const DataParallelTimer* timer) {
  const ParallelismSpec& par = sc.parallelism;
  const DataParallelSemantics& dps = par.data_parallel.semantics;
  SyncCosts& sync = r.sync;
  const auto p = static_cast<std::size_t>(sc.stages);
  const double t = static_cast<double>(par.tp);
  // Parameters per GPU of every stage: the model's, costs.gradient_bytes at the reduce dtype, or
  // 1 of the 18 bytes a parameter holds of the stage's static memory (docs/parallelism.md).
  std::vector<double> params(p, 0.0), experts(p, 0.0);
  sync.gradient_bytes.assign(p, Bytes::zero());
  sync.units.assign(p, 1);
  for (std::size_t s = 0; s < p; ++s) {
    if (r.model_costs) {
      const StageBreakdown& b = r.model_costs->stages[s];
      params[s] = b.parameters_per_gpu;
      experts[s] = b.expert_parameters_per_gpu;
      sync.units[s] = b.layers + (b.embedding ? 1 : 0) + (b.lm_head ? 1 : 0);
    } else if (!par.given.gradient_bytes.empty()) {
      params[s] = par.given.gradient_bytes[s].as_double() / t / dps.reduce_bytes;
    } else {
      params[s] = sc.costs.profile.stages[s].static_memory.as_double() / 18.0 /
                  (sc.costs.per == CostBasis::Stage ? t : 1.0);
    }
    // The gradients in the engine's reduce dtype, unless costs.gradient_bytes gives them.
    const double grad = !par.given.gradient_bytes.empty()
                            ? par.given.gradient_bytes[s].as_double() / t
                            : params[s] * dps.reduce_bytes;
    sync.gradient_bytes[s] = Bytes(static_cast<std::int64_t>(grad));
  }
  // The routed experts' gradients (docs/moe.md): held by the dp / ep replicas of the same EP rank
  // (and every TP rank: experts are not split by TP), they sync over that group, not the dp group.
  const bool experts_apart = par.ep > 1 || par.tp > 1;
  if (par.given.gradient_bytes.empty() && experts_apart &&
      std::any_of(experts.begin(), experts.end(), [](double e) { return e > 0; })) {
    sync.expert_gradient_bytes.assign(p, Bytes::zero());
    for (std::size_t s = 0; s < p; ++s)
      sync.expert_gradient_bytes[s] =
          Bytes(static_cast<std::int64_t>(experts[s] * dps.reduce_bytes));
  }
  sync.gradient_collective =
      dps.end.reduce_scatter ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
  sync.end_runs = dps.end.runs;
  if (!timer || !par.enabled || par.gradient_group() <= 1) return;

  if (dps.gather != ParameterGather::None) {
    // The updated parameters all-gathered over the shard group: after the step (exposed), or
    // before the next forward, piece by piece behind its compute (Megatron's buckets, the first
    // pipeline rank's only; FSDP's units).
    const std::int64_t bucket_params = static_cast<std::int64_t>(
        static_cast<double>(par.data_parallel.bucket
                                .value_or(Bytes(default_bucket_bytes(dps, par.gradient_group())))
                                .count()) /
        dps.reduce_bytes);
    sync.parameter_gather.assign(p, Time::zero());
    for (std::size_t s = 0; s < p; ++s) {
      const auto stage = static_cast<std::int32_t>(s);
      const double dense = params[s] - experts[s];
      const double linear = dps.fp8_param_gather && r.model_costs
                                ? linear_parameters(sc, r.model_costs->stages[s])
                                : 0.0;
      const double bytes = (dense - linear) * dps.gather_bytes + linear;
      std::int64_t pieces = 1;
      if (dps.gather == ParameterGather::BehindFill) pieces = sync.units[s];
      if (dps.gather == ParameterGather::BehindForward && s == 0)
        pieces = std::max<std::int64_t>(
            1, static_cast<std::int64_t>(std::ceil(dense / static_cast<double>(bucket_params))));
      const auto k = static_cast<double>(pieces);
      // The routed experts' updated parameters are gathered over their own group, bucket by
      // bucket after the dense ones (Megatron's expert-parallel bucket groups).
      const double piece =
          timer->shard_group(stage, CollectiveKind::AllGather, bytes / k).simulated.seconds() +
          (experts[s] > 0
               ? timer->expert_parameter_gather(stage, experts[s] * dps.gather_bytes / k).seconds()
               : 0.0);
      const double forward = r.costs.stages[s].forward.seconds();
      sync.parameter_gather[s] = Time::from_seconds(
          dps.gather == ParameterGather::AfterStep ? piece : prefetched(piece, forward, pieces));
    }
  }
  if (r.model_costs && (dps.per_microbatch.gather_forward || dps.per_microbatch.reduce_scatter)) {
    for (const StageBreakdown& b : r.model_costs->stages) {
      sync.dp_gather_forward.push_back(Time::from_seconds(b.forward.zero_comm));
      sync.dp_gather_backward.push_back(Time::from_seconds(b.backward_input.zero_comm));
      sync.dp_reduce_scatter.push_back(Time::from_seconds(b.backward_weight.zero_comm));
    }
    for (std::size_t s = 0; s < p; ++s)
      add_per_op_summaries(sc, r.model_costs->shard_units[s], static_cast<std::int32_t>(s), *timer,
                           sync.tp_summaries);
  }
}

}  // namespace bubblesim
