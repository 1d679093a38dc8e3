#include "tools/runner/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
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

RouteEstimates route_estimates(const Scenario& scenario) {
  RouteEstimates out;
  const CommunicationSpec& comm = scenario.communication;
  if (comm.kind == CommunicationKind::FixedDelay || !comm.topology) return out;
  const Topology& topo = *comm.topology;
  const std::size_t p = comm.placement.size();
  out.bandwidth.assign(p * p, Bandwidth::bytes_per_second(0.0));
  out.latency.assign(p * p, Time::zero());
  for (std::size_t a = 0; a < p; ++a) {
    for (std::size_t b = 0; b < p; ++b) {
      if (a == b) continue;
      const std::optional<Route> r = topo.route(comm.placement[a], comm.placement[b]);
      if (!r || r->links.empty()) continue;
      double bw = topo.link_bandwidth(r->links.front()).bytes_per_second();
      for (LinkId l : r->links) bw = std::min(bw, topo.link_bandwidth(l).bytes_per_second());
      out.bandwidth[a * p + b] = Bandwidth::bytes_per_second(bw);
      out.latency[a * p + b] = r->latency;
    }
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

/// Gradient bytes, optimizer time and the TP split (docs/parallelism.md). Under a topology the
/// gradient bytes are derived without `parallelism:` too: a schedule that holds a stage on two
/// devices (Chimera, DualPipe) pays its replica all-reduce whenever they are known.
void resolve_parallelism(const Scenario& sc, ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  const bool topology = sc.communication.kind == CommunicationKind::Topology;
  if ((!par.enabled && !topology) || sc.stages <= 0 ||
      sc.costs.stages.size() != static_cast<std::size_t>(sc.stages))
    return;
  const auto p = static_cast<std::size_t>(sc.stages);
  const std::vector<double> grad = stage_gradient_bytes(sc);
  if (par.tp > 1) split_for_tensor_parallelism(r.costs.stages, par.tp);
  SyncCosts& sync = r.sync;
  sync.gradient_bytes.assign(p, Bytes::zero());
  for (std::size_t s = 0; s < p; ++s) {
    sync.gradient_bytes[s] = Bytes(static_cast<std::int64_t>(grad[s] / par.tp));
  }
  sync.tp_forward.assign(p, Time::zero());
  sync.tp_backward.assign(p, Time::zero());
  add_tensor_parallel_communication(sc, r);
}

/// The optimizer step of one GPU per pipeline stage (after the TP split): explicit, or Adam's
/// memory-bound pass (it reads and writes every byte of weights, gradients and optimizer state
/// once) at the GPU's memory bandwidth; empty when neither is known.
std::vector<Time> optimizer_steps(const Scenario& sc, const ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  if (!par.optimizer_step.empty()) return par.optimizer_step;
  if (!sc.gpu || !sc.gpu->memory_bandwidth || !(sc.gpu->memory_bandwidth->bytes_per_second() > 0))
    return {};
  std::vector<Time> out;
  for (const StageCost& c : r.costs.stages) {
    out.push_back(Time::from_seconds(2.0 * c.static_memory.as_double() /
                                     sc.gpu->memory_bandwidth->bytes_per_second()));
  }
  return out;
}

/// Per device, the optimizer steps of the table stages it holds (a stage's step divided among its
/// chunks; a replicated stage is stepped on every device holding it).
std::vector<Time> device_steps(const ResolvedScenario& r, const Table& table) {
  if (r.optimizer_step.empty()) return {};
  std::vector<Time> out(static_cast<std::size_t>(table.devices), Time::zero());
  const std::int64_t chunks = std::max(table.chunks, 1);
  for (std::int32_t d = 0; d < table.devices; ++d) {
    for (std::int32_t s : table.placement.stages_held_by(d)) {
      const auto profile = static_cast<std::size_t>(s / chunks);
      if (profile < r.optimizer_step.size())
        out[static_cast<std::size_t>(d)] += Time::from_ps(r.optimizer_step[profile].ps() / chunks);
    }
  }
  return out;
}

/// The global barrier's own time: the gradient-norm all-reduce of one fp32 value over the
/// pipeline's GPUs (latency-bound; binomial tree on the topology's alpha-beta). Zero under
/// fixed-delay, whose one delay describes a stage-to-stage transfer, not a small message.
Time barrier_time(const Scenario& sc) {
  const CommunicationSpec& comm = sc.communication;
  if (comm.kind != CommunicationKind::Topology || !comm.topology || comm.placement.size() < 2)
    return Time::zero();
  const AlphaBeta ab = measure_alpha_beta(*comm.topology, comm.placement);
  const std::vector<std::int32_t> nodes = node_of_gpus(*comm.topology, comm.placement);
  const auto distinct =
      static_cast<std::int32_t>(std::set<std::int32_t>(nodes.begin(), nodes.end()).size());
  return collective_closed_form(CollectiveKind::AllReduce, CollectiveAlgorithm::Tree, 4.0,
                                static_cast<std::int32_t>(comm.placement.size()), distinct, ab);
}

}  // namespace

ResolvedScenario resolve(const Scenario& scenario) {
  ResolvedScenario r;
  r.scenario = &scenario;
  r.costs = scenario.costs;
  r.memory_budget = budget_per_device(scenario);
  r.offload = offload_bandwidths(scenario);
  r.routes = route_estimates(scenario);
  if (!scenario.file.empty()) r.base_dir = scenario_base_dir(scenario.file);
  resolve_parallelism(scenario, r);
  r.optimizer_step = optimizer_steps(scenario, r);
  if (!r.sync.gradient_bytes.empty()) {
    r.sync.optimizer = r.optimizer_step;
    r.sync.optimizer.resize(static_cast<std::size_t>(scenario.stages), Time::zero());
  }
  r.barrier = barrier_time(scenario);
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
  in.route_bandwidth = resolved.routes.bandwidth;
  in.route_latency = resolved.routes.latency;
  in.optimizer_step = resolved.optimizer_step;
  in.iteration_barrier = scenario.iteration.barrier;
  if (in.iteration_barrier == IterationBarrier::Global) in.barrier_time = resolved.barrier;
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
  in.p2p = comm.p2p;
  IterationPlan& it = in.iterations;
  it.count = scenario.iteration.count;
  it.barrier = scenario.iteration.barrier;
  it.barrier_duration = it.barrier == IterationBarrier::Global ? resolved.barrier : Time::zero();
  if (!in.sync) it.optimizer_step = device_steps(resolved, table);
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
