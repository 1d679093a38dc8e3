#include "tools/runner/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/engine/collectives.h"
#include "tools/runner/sync_plan.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/transformer_costs.h"

namespace bubblesim {
namespace {

std::vector<Bytes> budget_per_device(const Scenario& scenario) {
  std::vector<Bytes> out;
  if (scenario.memory.budget.empty()) return out;
  for (std::int32_t d = 0; d < scenario.stages; ++d)
    out.push_back(*memory_budget_of_device(scenario.memory, d));
  return out;
}

OffloadBandwidths offload_bandwidths(const Scenario& scenario) {
  OffloadBandwidths out;
  const CommunicationSpec& comm = scenario.communication;
  const auto p = static_cast<std::size_t>(scenario.stages);
  if (comm.kind == CommunicationKind::FixedDelay) {
    if (scenario.memory.offload_bandwidth) {
      out.d2h.assign(p, *scenario.memory.offload_bandwidth);
      out.h2d = out.d2h;
    }
    return out;
  }
  if (!comm.topology) return out;
  const Topology& topo = *comm.topology;
  auto bottleneck = [&](const std::optional<Route>& r) {
    double bw = 0.0;
    if (r && !r->links.empty()) {
      bw = topo.link_bandwidth(r->links.front()).bytes_per_second();
      for (LinkId l : r->links) bw = std::min(bw, topo.link_bandwidth(l).bytes_per_second());
    }
    return Bandwidth::bytes_per_second(bw);
  };
  for (VertexId gpu : comm.placement) {
    std::optional<VertexId> host = topo.nearest_host(gpu);
    if (!host) return {};
    out.d2h.push_back(bottleneck(topo.route(gpu, *host)));
    out.h2d.push_back(bottleneck(topo.route(*host, gpu)));
  }
  return out;
}

/// Whole-stage gradient bytes before the TP split: explicit, from the transformer (fp32
/// gradients, Megatron's main_grad: 4 bytes per parameter), or from static memory (4 of its 18
/// bytes per parameter are the fp32 gradient).
std::vector<double> stage_gradient_bytes(const Scenario& sc) {
  const auto p = static_cast<std::size_t>(sc.stages);
  const ParallelismSpec& par = sc.parallelism;
  std::vector<double> grad(p, 0.0);
  std::vector<std::int64_t> layers;
  if (sc.model) layers = split_layers(sc.model->layers, sc.stages);
  for (std::size_t s = 0; s < p; ++s) {
    if (!par.gradient_bytes.empty()) {
      grad[s] = par.gradient_bytes[s].as_double();
    } else if (sc.model) {
      TransformerLayerCosts lc = transformer_layer_costs(*sc.model);
      double params = lc.parameters * static_cast<double>(layers[s]);
      if (s == 0 || s + 1 == p) params += lc.embedding_parameters;
      grad[s] = params * 4.0;
    } else {
      grad[s] = sc.costs.stages[s].static_memory.as_double() * 4.0 / 18.0;
    }
  }
  return grad;
}

/// Megatron tensor parallelism over T ranks: every time, activation, p2p and static size divided
/// by T (sequence parallelism splits every activation tensor, Korthikanti et al. eq. 5; the p2p
/// hidden state is sent as T shards in parallel).
void split_for_tensor_parallelism(std::vector<StageCost>& stages, std::int64_t t) {
  auto div = [&](Time x) { return Time::from_ps(x.ps() / t); };
  auto divb = [&](Bytes x) { return Bytes(x.count() / t); };
  for (StageCost& c : stages) {
    c.forward = div(c.forward);
    c.backward_input = div(c.backward_input);
    c.backward_weight = div(c.backward_weight);
    c.recompute = div(c.recompute);
    c.fused = div(c.fused);
    c.activation = divb(c.activation);
    c.weight_grad = divb(c.weight_grad);
    c.stage_input = divb(c.stage_input);
    c.p2p = divb(c.p2p);
    c.static_memory = divb(c.static_memory);
  }
}

/// TP all-reduce time inside F and B (transformer model only: 2 all-reduces of s b h dtype bytes
/// per layer in each, timed as flows on the stage's TP group), added to the ops' costs.
void add_tensor_parallel_communication(const Scenario& sc, ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  const auto p = static_cast<std::size_t>(sc.stages);
  const std::int32_t t = par.tp;
  if (t <= 1 || !sc.model || !sc.communication.topology ||
      par.gpus.size() != static_cast<std::size_t>(par.world(sc.stages)))
    return;
  const Topology& topo = *sc.communication.topology;
  const std::vector<std::int64_t> layers = split_layers(sc.model->layers, sc.stages);
  const double bytes = transformer_layer_costs(*sc.model).hidden_state_bytes;
  for (std::size_t s = 0; s < p; ++s) {
    std::vector<VertexId> group;
    for (std::int32_t rank = 0; rank < t; ++rank) {
      group.push_back(par.gpus[par.rank_index(sc.stages, static_cast<std::int32_t>(s), 0, rank)]);
    }
    CollectiveTiming one;
    try {
      one = simulate_collective(topo, group, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring,
                                bytes);
    } catch (const std::invalid_argument& e) {
      throw InputError({Diagnostic{par.where, "parallelism.tp", e.what()}});
    }
    // Megatron block: 2 all-reduces per layer in forward (attention, MLP), 2 in backward.
    const auto count = 2 * layers[s];
    const Time per_op = Time::from_ps(one.simulated.ps() * count);
    r.sync.tp_forward[s] = per_op;
    r.sync.tp_backward[s] = per_op;
    StageCost& c = r.costs.stages[s];
    c.forward += per_op;
    c.backward_input += per_op;
    c.recompute += per_op;
    if (c.fused > Time::zero()) c.fused += per_op + per_op;
    r.sync.tp_summaries.push_back(
        CollectiveSummary{fmt::format("tp all-reduce stage {} (per F or B op)", s), "ring", t,
                          static_cast<std::int32_t>(count),
                          Bytes(static_cast<std::int64_t>(bytes * static_cast<double>(count))),
                          per_op, Time::from_ps(one.closed_form.ps() * count)});
  }
}

/// Gradient bytes, optimizer time and the TP split (docs/parallelism.md).
void resolve_parallelism(const Scenario& sc, ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  if (!par.enabled || sc.stages <= 0 ||
      sc.costs.stages.size() != static_cast<std::size_t>(sc.stages))
    return;
  const auto p = static_cast<std::size_t>(sc.stages);
  const std::vector<double> grad = stage_gradient_bytes(sc);
  if (par.tp > 1) split_for_tensor_parallelism(r.costs.stages, par.tp);
  SyncCosts& sync = r.sync;
  sync.gradient_bytes.assign(p, Bytes::zero());
  sync.optimizer.assign(p, Time::zero());
  for (std::size_t s = 0; s < p; ++s) {
    sync.gradient_bytes[s] = Bytes(static_cast<std::int64_t>(grad[s] / par.tp));
    if (!par.optimizer_step.empty()) {
      sync.optimizer[s] = par.optimizer_step[s];
    } else if (sc.gpu && sc.gpu->memory_bandwidth &&
               sc.gpu->memory_bandwidth->bytes_per_second() > 0) {
      // Adam reads and writes every byte of weights, gradients and optimizer state once.
      sync.optimizer[s] = Time::from_seconds(2.0 * r.costs.stages[s].static_memory.as_double() /
                                             sc.gpu->memory_bandwidth->bytes_per_second());
    }
  }
  sync.tp_forward.assign(p, Time::zero());
  sync.tp_backward.assign(p, Time::zero());
  add_tensor_parallel_communication(sc, r);
}

}  // namespace

ResolvedScenario resolve(const Scenario& scenario) {
  ResolvedScenario r;
  r.scenario = &scenario;
  r.costs = scenario.costs;
  r.memory_budget = budget_per_device(scenario);
  r.offload = offload_bandwidths(scenario);
  if (!scenario.file.empty()) r.base_dir = scenario_base_dir(scenario.file);
  resolve_parallelism(scenario, r);
  return r;
}

GeneratorInput make_generator_input(const ResolvedScenario& resolved, const ParamValues& params) {
  const Scenario& scenario = *resolved.scenario;
  GeneratorInput in;
  in.devices = scenario.stages;
  in.microbatches = scenario.microbatches;
  in.params = params;
  in.costs = resolved.costs;
  if (scenario.communication.kind == CommunicationKind::FixedDelay)
    in.delay = scenario.communication.delay;
  in.memory_budget = resolved.memory_budget;
  in.base_dir = resolved.base_dir;
  in.offload_d2h = resolved.offload.d2h;
  in.offload_h2d = resolved.offload.h2d;
  return in;
}

EngineInput make_engine_input(const ResolvedScenario& resolved, const Table& table,
                              const std::vector<StageCost>& stage_costs, Replay replay) {
  const Scenario& scenario = *resolved.scenario;
  EngineInput in;
  in.table = &table;
  in.stage_costs = stage_costs;
  in.release = scenario.memory.release;
  if (replay == Replay::Idealized) {
    in.network = NoCostNetwork{};
    return in;
  }
  const CommunicationSpec& comm = scenario.communication;
  if (comm.kind == CommunicationKind::FixedDelay) {
    in.network = FixedDelayNetwork{comm.delay};
  } else {
    in.network = TopologyNetwork{comm.topology.get(), comm.placement};
    in.sync = make_sync_plan(resolved, table);  // docs/parallelism.md
  }
  in.offload_bandwidth = scenario.memory.offload_bandwidth;
  in.host_capacity = scenario.memory.host_capacity;
  in.memory_budget = resolved.memory_budget;
  if (replay == Replay::FaultFree) return in;
  in.compute_slowdown = scenario.faults.slowdown;
  for (const LinkFaultSpec& f : scenario.faults.links) {
    for (LinkId l : f.links) {
      in.link_faults.push_back(
          LinkFault{l, f.at, f.bandwidth ? f.bandwidth->bytes_per_second() : 0.0});
    }
  }
  return in;
}

}  // namespace bubblesim
