#include "sim/runner/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "sim/engine/collectives.h"
#include "sim/runner/a2a_plan.h"
#include "sim/runner/clock_range.h"
#include "sim/runner/op_time_floor.h"
#include "sim/runner/resolve_costs.h"
#include "sim/runner/sync_plan.h"
#include "sim/scenario/scenario_loader.h"

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
  out.bandwidth.assign(2 * p, Bandwidth::bytes_per_second(0.0));
  out.latency.assign(2 * p, Time::zero());
  // Neighbouring devices only: the stage-to-stage transfers of straight and V placements (2p
  // routes; every pair would be p^2 routes, minutes on a large cluster).
  for (std::size_t a = 0; a < p; ++a) {
    for (std::size_t b : {a + 1, a - 1}) {
      if (b >= p) continue;
      const std::optional<Route> r = topo.route(comm.placement[a], comm.placement[b]);
      if (!r || r->links.empty()) continue;
      double bw = topo.link_bandwidth(r->links.front()).bytes_per_second();
      for (LinkId l : r->links) bw = std::min(bw, topo.link_bandwidth(l).bytes_per_second());
      const std::size_t k = 2 * a + (b == a + 1 ? 0 : 1);  // GeneratorInput::route_bandwidth
      out.bandwidth[k] = Bandwidth::bytes_per_second(bw);
      out.latency[k] = r->latency;
    }
  }
  return out;
}

/// The optimizer step of one GPU per pipeline stage (after the TP split): explicit, or Adam's
/// memory-bound pass (it reads and writes every byte of weights, gradients and optimizer state
/// once) at the GPU's memory bandwidth; empty when neither is known.
std::vector<Time> optimizer_steps(const Scenario& sc, const ResolvedScenario& r) {
  const ParallelismSpec& par = sc.parallelism;
  if (!par.given.optimizer_step.empty()) return par.given.optimizer_step;
  if (!sc.gpu || !sc.gpu->memory_bandwidth || !(sc.gpu->memory_bandwidth->bytes_per_second() > 0))
    return {};
  std::vector<Time> out;
  if (sc.gpu->mechanisms.optimizer_step && r.model_costs) {
    // docs/first-principles.md: Megatron-LM's mixed-precision optimizer step, kernel by kernel,
    // each pass's bytes at the HBM bandwidth x the memory-bound efficiency.
    // The gradient buffer: fp32 (Megatron's main_grad, bubblesim's default), or what
    // costs.gradient_bytes gives per parameter; fp16 runs under a loss scaler, bf16 does not.
    const bool loss_scaling = sc.model->dtype.name == "fp16";
    const double dp =
        par.zero.level >= 1 ? static_cast<double>(std::max(par.shard_group(), 1)) : 1.0;
    const double rate = sc.gpu->memory_bandwidth->bytes_per_second() * sc.gpu->efficiency.memory;
    const double t = static_cast<double>(std::max<std::int64_t>(par.tp, 1));
    for (std::size_t s = 0; s < r.model_costs->stages.size(); ++s) {
      const double params = r.model_costs->stages[s].parameters_per_gpu;
      const double grad = s < par.given.gradient_bytes.size() && params > 0
                              ? par.given.gradient_bytes[s].as_double() / t / params
                              : 4.0;
      const OptimizerBytes ob = megatron_optimizer_bytes(sc.model->dtype.bytes, grad, loss_scaling);
      out.push_back(
          Time::from_seconds((ob.per_parameter * params + ob.per_shard * params / dp) / rate));
    }
    return out;
  }
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
  const auto held = table.placement.stages_by_device(table.devices);
  for (std::int32_t d = 0; d < table.devices; ++d) {
    for (std::int32_t s : held[static_cast<std::size_t>(d)]) {
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
  r.memory_budget = budget_per_device(scenario);
  r.offload = offload_bandwidths(scenario);
  r.routes = route_estimates(scenario);
  if (!scenario.file.empty()) r.base_dir = scenario_base_dir(scenario.file);
  resolve_costs(scenario, r);
  check_op_time_floor(scenario, r);
  r.optimizer_step = optimizer_steps(scenario, r);
  check_clock_range(scenario, r);
  if (!r.sync.gradient_bytes.empty()) {
    r.sync.optimizer = r.optimizer_step;
    r.sync.optimizer.resize(static_cast<std::size_t>(scenario.stages), Time::zero());
  }
  r.barrier = barrier_time(scenario);
  r.tied_embedding = resolve_tied_embedding(scenario);
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
  in.release = scenario.memory.release;
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
    // The expert all-to-all as flows: docs/moe.md.
    in.network = TopologyNetwork{comm.topology.get(), comm.placement,
                                 make_a2a_plan(resolved, table, stage_costs)};
    in.sync = make_sync_plan(resolved, table);  // docs/parallelism.md
  }
  in.offload_bandwidth = scenario.memory.offload_bandwidth;
  in.host_capacity = scenario.memory.host_capacity;
  in.memory_budget = resolved.memory_budget;
  in.p2p = PointToPoint{comm.p2p, comm.p2p_sync_gap};
  IterationPlan& it = in.iterations;
  it.count = scenario.iteration.count;
  it.barrier = scenario.iteration.barrier;
  it.barrier_duration = it.barrier == IterationBarrier::Global ? resolved.barrier : Time::zero();
  if (!in.sync) it.optimizer_step = device_steps(resolved, table);
  it.pair_syncs = tied_embedding_pairs(scenario, resolved.tied_embedding, table);
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
