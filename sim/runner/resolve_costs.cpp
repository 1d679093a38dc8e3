#include "sim/runner/resolve_costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "sim/engine/collectives.h"
#include "sim/runner/a2a_plan.h"
#include "sim/runner/collective_options.h"
#include "sim/runner/data_parallel_costs.h"
#include "sim/units/overflow_error.h"

namespace bubblesim {
namespace {

/// Collectives of the cost model as flows on the otherwise idle topology, one stage's groups at
/// a time (cached: every layer of a stage sends the same bytes over the same ranks).
class TopologyCollectives : public CollectiveTimer, public DataParallelTimer {
  /// The stage's groups a collective runs on: its first TP group, its first shard group (the
  /// data-parallel ranks with their cp ranks, ParallelismSpec::shard_group), its first HSDP
  /// replicate group, its first CP ring.
  enum class Group { Tensor, Data, Replicate, Context };

 public:
  explicit TopologyCollectives(const Scenario& sc) : sc_(sc) {}

  Time tensor_parallel(std::int32_t stage, double bytes) const override {
    if (!sc_.parallelism.sp)
      return timing(stage, Group::Tensor, CollectiveKind::AllReduce, bytes).simulated;
    return timing(stage, Group::Tensor, CollectiveKind::ReduceScatter, bytes).simulated +
           timing(stage, Group::Tensor, CollectiveKind::AllGather, bytes).simulated;
  }
  Time parameter_gather(std::int32_t stage, double bytes) const override {
    return timing(stage, Group::Data, CollectiveKind::AllGather, bytes).simulated;
  }
  Time gradient_reduce_scatter(std::int32_t stage, double bytes) const override {
    return timing(stage, Group::Data, CollectiveKind::ReduceScatter, bytes).simulated;
  }
  Time replicate_all_reduce(std::int32_t stage, double bytes) const override {
    if (sc_.parallelism.data_parallel.replicate <= 1) return Time::zero();
    return timing(stage, Group::Replicate, CollectiveKind::AllReduce, bytes).simulated;
  }
  CollectiveTiming shard_group(std::int32_t stage, CollectiveKind kind,
                               double bytes) const override {
    return timing(stage, Group::Data, kind, bytes);
  }
  /// A ring step of every CP rank sending `bytes` to the next: a ring all-gather of the cp
  /// blocks over the CP group is cp - 1 such steps (on the topology, or at NCCL's rate inside a
  /// node under first_principles.nccl).
  Time context_parallel_step(std::int32_t stage, double bytes) const override {
    return ring_step(stage, bytes).simulated;
  }
  /// One all-to-all over the stage's EP group: ep consecutive dp ranks at TP rank 0, as flows on
  /// the topology; flows between nodes carry min(max_nodes, nodes) / top_k of their share when
  /// `moe.max_nodes` limits the nodes a token is sent to.
  /// Stages whose groups have the same shape (all_to_all_shape) share one simulation: on a
  /// regular cluster every stage's group is a copy of the first on other nodes, and timing each
  /// took most of a DeepSeek-V3-like run's setup on 2,048 GPUs.
  Time expert_all_to_all(std::int32_t stage, double bytes) const override {
    const auto key = std::make_tuple(stage, -1, -1, bytes);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second.simulated;
    const std::vector<VertexId> group = ep_group(sc_, stage);
    const double factor = a2a_cross_node_factor(sc_, group);
    const Topology& topology = *sc_.communication.topology;
    std::vector<std::int64_t> shape = all_to_all_shape(topology, group);
    if (shape.empty()) {  // beyond the flow limit: simulate_all_to_all says so
      CollectiveTiming t;
      t.simulated = simulate_all_to_all(topology, group, bytes, factor);
      return cache_.emplace(key, t).first->second.simulated;
    }
    shape.push_back(static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(bytes)));
    shape.push_back(static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(factor)));
    auto [at, fresh] = a2a_by_shape_.try_emplace(std::move(shape), Time::zero());
    if (fresh) at->second = simulate_all_to_all(topology, group, bytes, factor);
    CollectiveTiming t;
    t.simulated = at->second;
    return cache_.emplace(key, t).first->second.simulated;
  }
  /// ZeRO: the routed experts' updated parameters all-gathered over the stage's first expert
  /// data-parallel group (docs/moe.md); zero when that group is one GPU.
  Time expert_parameter_gather(std::int32_t stage, double bytes) const override {
    const ParallelismSpec& par = sc_.parallelism;
    std::vector<VertexId> group;
    for (std::size_t i : par.expert_group(sc_.stages, stage, 0)) group.push_back(par.gpus[i]);
    if (group.size() <= 1) return Time::zero();
    return simulate_planned(planner(), group, CollectiveKind::AllGather, bytes).simulated;
  }
  /// The closed form of one ring step on the stage's CP group (for the report).
  Time context_parallel_step_closed_form(std::int32_t stage, double bytes) const {
    return ring_step(stage, bytes).closed_form;
  }
  /// The closed form of one all-reduce equivalent on the stage's TP group (for the report).
  Time tensor_parallel_closed_form(std::int32_t stage, double bytes) const {
    if (!sc_.parallelism.sp)
      return timing(stage, Group::Tensor, CollectiveKind::AllReduce, bytes).closed_form;
    return timing(stage, Group::Tensor, CollectiveKind::ReduceScatter, bytes).closed_form +
           timing(stage, Group::Tensor, CollectiveKind::AllGather, bytes).closed_form;
  }

 private:
  std::vector<VertexId> group_of(std::int32_t stage, Group g) const {
    const ParallelismSpec& par = sc_.parallelism;
    std::vector<VertexId> group;
    auto add = [&](std::int32_t r, std::int32_t t, std::int32_t c) {
      group.push_back(par.gpus[par.rank_index(sc_.stages, stage, r, t, c)]);
    };
    switch (g) {
      case Group::Tensor:
        for (std::int32_t t = 0; t < par.tp; ++t) add(0, t, 0);
        break;
      case Group::Data:  // torchtitan's mesh: dp_replicate outside dp_shard outside cp
        for (std::int32_t r = 0; r < par.dp / std::max(par.data_parallel.replicate, 1); ++r)
          for (std::int32_t c = 0; c < par.cp; ++c) add(r, 0, c);
        break;
      case Group::Replicate:
        for (std::int32_t r = 0; r < par.dp; r += par.dp / std::max(par.data_parallel.replicate, 1))
          add(r, 0, 0);
        break;
      case Group::Context:
        for (std::int32_t c = 0; c < par.cp; ++c) add(0, 0, c);
        break;
    }
    return group;
  }

  /// One of the cp - 1 steps of a ring all-gather of cp blocks of `bytes` over the stage's CP
  /// group, simulated and closed form; zero without context parallelism.
  CollectiveTiming ring_step(std::int32_t stage, double bytes) const {
    const std::int32_t cp = sc_.parallelism.cp;
    if (cp <= 1) return {};
    CollectiveTiming all = timing(stage, Group::Context, CollectiveKind::AllGather, bytes * cp);
    all.simulated = Time::from_ps(all.simulated.ps() / (cp - 1));
    all.closed_form = Time::from_ps(all.closed_form.ps() / (cp - 1));
    return all;
  }

  CollectiveTiming timing(std::int32_t stage, Group g, CollectiveKind kind, double bytes) const {
    const auto key = std::make_tuple(stage, static_cast<int>(g), static_cast<int>(kind), bytes);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    const ParallelismSpec& par = sc_.parallelism;
    const std::vector<VertexId> group = group_of(stage, g);
    CollectiveTiming t;
    try {
      // The data-parallel group runs the scenario's algorithm (NCCL's choice under `auto`); the
      // TP group NCCL's choice; the CP ring is a ring.
      const std::optional<CollectiveAlgorithm> algorithm =
          g == Group::Data      ? std::nullopt
          : g == Group::Context ? std::optional(CollectiveAlgorithm::Ring)
                                : std::optional(CollectiveAlgorithm::Auto);
      t = simulate_planned(planner(), group, kind, bytes, nullptr, algorithm);
    } catch (const std::invalid_argument& e) {
      const char* key_name = g == Group::Data        ? "parallelism.zero"
                             : g == Group::Replicate ? "data_parallel.replicate"
                             : g == Group::Context   ? "parallelism.cp"
                                                     : "parallelism.tp";
      throw InputError({Diagnostic{par.where, key_name, e.what()}});
    }
    if (const std::optional<Time> nccl = nccl_time(group, kind, bytes)) {
      t.simulated = *nccl;
      t.algorithm = nvls_inside_node(kind, group.size()) ? "nvls" : "ring";
    }
    return cache_.emplace(key, t).first->second;
  }

  /// `first_principles.nccl` (docs/first-principles.md): a ring collective inside one node at
  /// the bus bandwidth nccl-tests measure there, plus NCCL's own latency model (base + one step
  /// latency per ring step); nullopt when off or the group spans nodes (then the flows time it).
  std::optional<Time> nccl_time(const std::vector<VertexId>& group, CollectiveKind kind,
                                double bytes) const {
    if (!sc_.gpu || !sc_.gpu->mechanisms.nccl || group.size() < 2) return std::nullopt;
    const std::vector<std::int32_t> nodes = node_of_gpus(*sc_.communication.topology, group);
    if (std::any_of(nodes.begin(), nodes.end(), [&](std::int32_t x) { return x != nodes[0]; }))
      return std::nullopt;
    const GpuMeasured& hw = sc_.gpu->measured;
    const auto n = static_cast<double>(group.size());
    // nccl-tests' bus bytes: 2 (n-1)/n S for an all-reduce, (n-1)/n S for the others; ring steps
    // 2 (n-1) and n-1 (NCCL src/graph/tuning.cc: nsteps).
    const double share = kind == CollectiveKind::AllReduce ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
    const double steps = kind == CollectiveKind::AllReduce ? 2.0 * (n - 1.0) : n - 1.0;
    const double busbw = nvls_inside_node(kind, group.size()) ? hw.nvls_busbw : hw.nvlink_busbw;
    return Time::from_seconds(hw.nccl_base_latency_s + steps * hw.nccl_step_latency_s +
                              share * bytes / busbw);
  }

  /// Whether nccl_time takes an all-reduce of `ranks` GPUs of one node at NVLS's bus bandwidth
  /// (the preset measured one, more than 4 ranks), else as a ring at NVLink's.
  bool nvls_inside_node(CollectiveKind kind, std::size_t ranks) const {
    return kind == CollectiveKind::AllReduce && ranks > 4 && sc_.gpu->measured.nvls_busbw > 0;
  }

  /// Plans the collectives as the scenario asks (collective_options.h); made on first use.
  const CollectivePlanner& planner() const {
    if (!planner_)
      planner_ =
          std::make_unique<CollectivePlanner>(*sc_.communication.topology, collective_options(sc_));
    return *planner_;
  }

  const Scenario& sc_;
  mutable std::unique_ptr<CollectivePlanner> planner_;
  mutable std::map<std::tuple<std::int32_t, int, int, double>, CollectiveTiming> cache_;
  mutable std::map<std::vector<std::int64_t>, Time> a2a_by_shape_;
};

/// The explicit costs as one GPU sees them: `per: stage` values divided by t, recompute as given.
StageCost per_gpu(const StageCost& given, std::int64_t t) {
  StageCost c = given;
  if (t <= 1) return c;
  auto div = [&](Time x) { return Time::from_ps(x.ps() / t); };
  auto divb = [&](Bytes x) { return Bytes(x.count() / t); };
  c.forward = div(c.forward);
  c.backward_input = div(c.backward_input);
  c.backward_weight = div(c.backward_weight);
  c.fused = div(c.fused);
  c.activation = divb(c.activation);
  c.weight_grad = divb(c.weight_grad);
  c.stage_input = divb(c.stage_input);
  c.p2p = divb(c.p2p);
  c.static_memory = divb(c.static_memory);
  return c;
}

/// Replaces the fields the scenario gave; an R not given follows a given F.
void overlay(StageCost& base, const StageCost& given, const CostFields& f) {
  if (f.forward) base.forward = given.forward;
  if (f.backward_input) base.backward_input = given.backward_input;
  if (f.backward_weight) base.backward_weight = given.backward_weight;
  if (f.recompute)
    base.recompute = given.recompute;
  else if (f.forward)
    base.recompute = base.forward;
  if (f.fused) base.fused = given.fused;
  if (f.activation) base.activation = given.activation;
  if (f.weight_grad) base.weight_grad = given.weight_grad;
  if (f.stage_input) base.stage_input = given.stage_input;
  if (f.p2p) base.p2p = given.p2p;
  if (f.static_memory) base.static_memory = given.static_memory;
}

ModelCosts derive_model_costs(const Scenario& sc, const TopologyCollectives* timer) {
  const ParallelismSpec& par = sc.parallelism;
  ModelCostInputs in;
  in.model = *sc.model;
  in.gpu = *sc.gpu;
  in.stages = sc.stages;
  in.sharding = Sharding{par.tp, par.sp, par.ep, par.sp_wgrad_input, par.cp, par.cp_exchange};
  in.comm_sm_fraction = par.overlap.comm_sm_fraction;
  in.tp_comm_overlap = par.overlap.tp_comm;
  in.tp_comm_sm_share = par.overlap.tp_comm_sm_share(sc.gpu->measured.sms);
  in.gpus = par.world(sc.stages);  // dp = tp = cp = 1 without `parallelism:`
  const DataParallelSemantics& dps = par.data_parallel.semantics;
  in.zero = ZeroSpec{par.zero.level, par.shard_group(), par.zero.overlap, dps.unsharded_bytes};
  in.sharded.schedule.gather_forward = dps.per_microbatch.gather_forward;
  in.sharded.schedule.gather_backward = dps.per_microbatch.gather_backward;
  in.sharded.schedule.reduce_scatter = dps.per_microbatch.reduce_scatter;
  in.sharded.schedule.prefetch = dps.prefetch;
  in.sharded.gather_bytes = dps.gather_bytes;
  in.sharded.reduce_bytes = dps.reduce_bytes;
  in.sharded.fp8_linear_gather = dps.fp8_param_gather;
  in.sharded.replicate = par.data_parallel.replicate > 1;
  if (dps.engine == DataParallelEngine::DeepSpeed)
    in.sharded.reduce_bucket_bytes = static_cast<double>(
        par.data_parallel.bucket.value_or(Bytes(default_bucket_bytes(dps, par.gradient_group())))
            .count());
  in.recompute = sc.memory.recompute;
  if (sc.costs.per_layer) {
    MeasuredLayer layer = *sc.costs.per_layer;
    if (sc.costs.per == CostBasis::Stage && par.tp * par.cp > 1) {
      // One GPU's share of the stage's layer: 1 / (tp cp) of its time and memory.
      const std::int64_t t = std::int64_t{par.tp} * par.cp;
      layer.forward = Time::from_ps(layer.forward.ps() / t);
      layer.backward_input = Time::from_ps(layer.backward_input.ps() / t);
      layer.backward_weight = Time::from_ps(layer.backward_weight.ps() / t);
      if (layer.activation) layer.activation = Bytes(layer.activation->count() / t);
      if (layer.weight_grad) layer.weight_grad = Bytes(layer.weight_grad->count() / t);
    }
    layer.includes_tp_comm = sc.costs.per == CostBasis::Gpu;
    in.per_layer = layer;
  }
  in.collectives = timer;
  try {
    return model_costs(in);
  } catch (const std::invalid_argument& e) {
    // The sections check what they can; what is left concerns the split over TP ranks.
    throw InputError({Diagnostic{par.where, "parallelism", e.what()}});
  } catch (const OverflowError& e) {
    // Each key is bounded where it is read; what they multiply to can still pass the clock.
    throw InputError({Diagnostic{
        sc.model->embedding.where, "model",
        fmt::format("an op time derived from the model does not fit in the simulated clock "
                    "(64-bit picoseconds, about 106 days): {}; check the model's size against "
                    "cluster.gpu.flops and the efficiency",
                    e.what())}});
  }
}

/// Gradient bytes per GPU and the TP times of every pipeline stage (the optimizer step is the
/// resolve step's). Under a topology the gradient bytes are derived without `parallelism:` too: a
/// schedule that holds a stage on two devices (Chimera, DualPipe) pays its replica all-reduce
/// whenever they are known.
void resolve_sync(const Scenario& sc, ResolvedScenario& r, const TopologyCollectives* timer) {
  const ParallelismSpec& par = sc.parallelism;
  const bool topology = sc.communication.kind == CommunicationKind::Topology;
  if ((!par.enabled && !topology) || sc.stages <= 0 ||
      r.costs.stages.size() != static_cast<std::size_t>(sc.stages))
    return;
  const auto p = static_cast<std::size_t>(sc.stages);
  SyncCosts& sync = r.sync;
  sync.tp_forward.assign(p, Time::zero());
  sync.tp_backward.assign(p, Time::zero());
  resolve_data_parallel(sc, r, timer);
  if (r.model_costs && par.cp > 1 && timer) {
    // The ring's steps per F op: their time on an idle network (closed form beside it), and in
    // the op's own time only what the attention blocks leave exposed (forward.cp_comm).
    for (std::size_t s = 0; s < p; ++s) {
      const StageBreakdown::Ring& ring = r.model_costs->stages[s].cp_ring;
      const auto stage = static_cast<std::int32_t>(s);
      const double steps = static_cast<double>(ring.steps_forward);
      const double one = timer->context_parallel_step(stage, ring.step_bytes).seconds();
      sync.tp_summaries.push_back(CollectiveSummary{
          fmt::format("cp {} K, V stage {} (per F op)",
                      cp_algorithm_name(par.cp_exchange.algorithm), s),
          "ring", par.cp, static_cast<std::int32_t>(ring.steps_forward),
          Bytes(static_cast<std::int64_t>(ring.step_bytes * steps)),
          Time::from_seconds(steps * one),
          Time::from_seconds(
              steps * timer->context_parallel_step_closed_form(stage, ring.step_bytes).seconds())});
    }
  }
  if (!r.model_costs || par.tp <= 1 || !timer) return;
  // The b s h activation of the GPU's s / cp tokens.
  const double bytes = static_cast<double>(sc.model->micro_batch_size * sc.model->seq_len *
                                           sc.model->hidden * sc.model->dtype.bytes) /
                       static_cast<double>(par.cp);
  for (std::size_t s = 0; s < p; ++s) {
    const StageBreakdown& b = r.model_costs->stages[s];
    sync.tp_forward[s] = Time::from_seconds(b.forward.tp_comm);
    sync.tp_backward[s] = Time::from_seconds(b.backward_input.tp_comm);
    const auto stage = static_cast<std::int32_t>(s);
    const double one = timer->tensor_parallel(stage, bytes).seconds();
    const double count = one > 0 ? b.forward.tp_comm / one : 0.0;
    sync.tp_summaries.push_back(CollectiveSummary{
        fmt::format("tp {} stage {} (per F op)",
                    par.sp ? "reduce-scatter + all-gather" : "all-reduce", s),
        "ring", par.tp, static_cast<std::int32_t>(std::llround(count)),
        Bytes(static_cast<std::int64_t>(bytes * count)), sync.tp_forward[s],
        Time::from_seconds(count * timer->tensor_parallel_closed_form(stage, bytes).seconds())});
  }
}

/// Recompute inside the backward with explicit costs (docs/memory.md): `costs.backward_input` is
/// the backward without recompute and `costs.recompute` what B redoes (selective: the attention
/// cores; full: the stage's forward, T_F unless given). Without a model the stage is one
/// checkpointed unit: F keeps `stage_input_memory`, B rebuilds the rest of M_B while it runs.
/// With a model, whose costs already hold the recompute in B, an explicit B or R replaces its
/// part.
void place_recompute_in_backward(const Scenario& sc, ResolvedScenario& r) {
  const RecomputeSettings& rc = sc.memory.recompute;
  if (!rc.in_backward()) return;
  const CostFields& given = sc.costs.given;
  if (rc.policy == MemoryPolicy::Selective && !sc.model && !given.recompute) {
    throw InputError({Diagnostic{
        sc.memory.recompute_where, "memory.recompute.policy",
        "selective recompute with explicit costs needs costs.recompute: the time of "
        "recomputing one microbatch's attention cores on the stage (it is added to B)"}});
  }
  for (std::size_t s = 0; s < r.costs.stages.size(); ++s) {
    StageCost& c = r.costs.stages[s];
    StageCost::BackwardRecompute& in_b = c.backward_recompute;
    if (!r.model_costs) {
      const Time redo = c.recompute > Time::zero() ? c.recompute : c.forward;
      in_b.time = redo;
      c.backward_input += redo;
      if (rc.policy != MemoryPolicy::Full) continue;
      const Bytes kept = std::min(c.stage_input, c.activation);
      in_b.units = 1;
      in_b.unit = in_b.not_stored = c.activation - kept;
      c.activation = kept;  // M_W stays: W needs the GEMM inputs B rebuilt
      continue;
    }
    if (!given.recompute && !given.backward_input) continue;
    const Time base = given.backward_input ? c.backward_input : c.backward_input - in_b.time;
    if (given.recompute) in_b.time = c.recompute;
    c.backward_input = base + in_b.time;
  }
}

}  // namespace

void resolve_costs(const Scenario& sc, ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  const auto p = static_cast<std::size_t>(sc.stages);
  const bool topology = par.enabled && sc.communication.topology &&
                        par.gpus.size() == static_cast<std::size_t>(par.world(sc.stages));
  std::optional<TopologyCollectives> timer;
  if (topology) timer.emplace(sc);
  const std::int64_t t = sc.costs.per == CostBasis::Stage ? par.tp : 1;
  if (par.ep > 1 && !timer) {
    throw InputError({Diagnostic{par.where, "parallelism.ep",
                                 "the expert all-to-all is timed as flows on the topology: "
                                 "expert parallelism needs 'topology:'"}});
  }
  if (sc.model && sc.gpu && sc.stages > 0) {
    r.model_costs = derive_model_costs(sc, timer ? &*timer : nullptr);
    r.costs = r.model_costs->profile;
  } else {
    r.costs.stages.assign(p, StageCost{});
  }
  const CostFields& given = sc.costs.given;
  if (sc.costs.profile.stages.size() == p) {
    for (std::size_t s = 0; s < p; ++s)
      overlay(r.costs.stages[s], per_gpu(sc.costs.profile.stages[s], t), given);
  }
  // Per-chunk costs describe the model alone; explicit values are per stage.
  if (given.any()) r.costs.chunked.clear();
  // Derived costs may keep more from B until W than F keeps for B (sequence parallelism: each
  // GEMM's output gradient kept for W outweighs the sharded activations B frees); the engine
  // allocates the difference at B (device_memory.h: backward_growth). Explicit M_W is the part
  // of M_B kept (costs_section checks it where both are given).
  for (std::size_t s = 0; s < p && !r.model_costs; ++s) {
    const StageCost& c = r.costs.stages[s];
    if (c.weight_grad <= c.activation) continue;
    throw InputError(
        {Diagnostic{sc.memory.recompute_where, "costs",
                    fmt::format("stage {}: weight_grad_memory ({}) exceeds activation_memory ({})",
                                s, c.weight_grad, c.activation)}});
  }
  place_recompute_in_backward(sc, r);
  resolve_sync(sc, r, timer ? &*timer : nullptr);
}

}  // namespace bubblesim
