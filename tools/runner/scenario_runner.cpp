#include "tools/runner/scenario_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "schedules/validator.h"
#include "sim/engine/engine.h"
#include "tools/runner/sync_plan.h"
#include "tools/scenario/scenario_loader.h"

namespace bubblesim {
namespace {

std::string make_label(const Generator& generator, const ParamValues& params) {
  std::vector<std::string> parts;
  for (const ParamSpec& spec : generator.info.params) {
    if (!params.has(spec.name)) continue;
    const ParamValue& v = params.all().at(spec.name);
    if (!spec.optional_default && v == spec.default_value) continue;
    parts.push_back(fmt::format("{}={}", spec.name, to_string(v)));
  }
  if (parts.empty()) return generator.info.name;
  return fmt::format("{}({})", generator.info.name, fmt::join(parts, ","));
}

}  // namespace

GeneratorInput make_generator_input(const Scenario& scenario, const ParamValues& params) {
  GeneratorInput in;
  in.devices = scenario.stages;
  in.microbatches = scenario.microbatches;
  in.params = params;
  in.costs = scenario.costs;
  if (scenario.communication.kind == CommunicationKind::FixedDelay)
    in.comm_delay = scenario.communication.delay;
  // One budget value means every device; else one per device (as the engine enforces them).
  const auto& budget = scenario.memory.budget;
  if (budget.size() == 1) {
    in.memory_budget.assign(static_cast<std::size_t>(scenario.stages), budget.front());
  } else {
    in.memory_budget = budget;
  }
  if (!scenario.file.empty()) in.base_dir = scenario_base_dir(scenario.file);
  OffloadBandwidths bw = offload_bandwidths(scenario);
  in.offload_d2h = std::move(bw.d2h);
  in.offload_h2d = std::move(bw.h2d);
  return in;
}

namespace {

/// generate_table with the generator input already built (run_schedule also gives it to formula()).
Table generate_from(const Scenario& scenario, const Generator& generator,
                    const ScheduleRequest& request, const GeneratorInput& in) {
  // Every table has at least a forward and a backward per stage and microbatch: refuse what
  // cannot fit under --max-ops before generating it (p = 65536, m = 10^6 would need terabytes).
  const std::int64_t at_least = std::int64_t{2} * scenario.stages * scenario.microbatches;
  if (at_least > scenario.max_ops) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: {} stages x {} microbatches need at least {} ops, more than the "
                    "limit of {} (raise it with --max-ops)",
                    generator.info.name, scenario.stages, scenario.microbatches, at_least,
                    scenario.max_ops)}});
  }
  Table table;
  try {
    table = generator.generate(in);
  } catch (const ScheduleConstraintError& e) {
    throw InputError({Diagnostic{request.where, "schedules",
                                 fmt::format("{}: {}", generator.info.name, e.what())}});
  }
  if (static_cast<std::int64_t>(table.op_count()) > scenario.max_ops) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: the table has {} ops, more than the limit of {} (raise it with "
                    "--max-ops)",
                    generator.info.name, table.op_count(), scenario.max_ops)}});
  }
  try {
    require_valid_table(table, generator.info.name);
  } catch (const InvalidTableError& e) {
    throw InputError({Diagnostic{request.where, "schedules", e.what()}});
  }
  return table;
}

}  // namespace

Table generate_table(const Scenario& scenario, const Generator& generator,
                     const ScheduleRequest& request,
                     const std::function<void(const std::string&)>& progress) {
  GeneratorInput in = make_generator_input(scenario, request.params);
  in.progress = progress;
  return generate_from(scenario, generator, request, in);
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

OffloadAnalysis analyze_offload(const Scenario& scenario) {
  OffloadAnalysis a;
  OffloadBandwidths bw = offload_bandwidths(scenario);
  if (bw.d2h.empty()) return a;
  a.bandwidth = *std::min_element(bw.d2h.begin(), bw.d2h.end());
  if (a.bandwidth->bytes_per_second() <= 0.0) return a;
  for (std::size_t s = 0; s < scenario.costs.stages.size() && s < bw.d2h.size(); ++s) {
    const StageCost& c = scenario.costs.stages[s];
    Time compute = c.forward + c.backward_input + c.backward_weight;
    if (c.activation <= Bytes::zero() || compute <= Time::zero() ||
        bw.d2h[s].bytes_per_second() <= 0.0)
      continue;
    double k = c.activation.as_double() / bw.d2h[s].bytes_per_second() / compute.seconds();
    if (!a.k || k > *a.k) {
      a.k = k;
      a.k_stage = static_cast<std::int32_t>(s);
    }
  }
  if (scenario.model && scenario.gpu) {
    const double h = static_cast<double>(scenario.model->hidden);
    const double seq = static_cast<double>(scenario.model->seq_len);
    const double flops = scenario.gpu->flops.flops_per_second() * scenario.gpu->efficiency;
    a.k_formula = 10.0 / (3.0 * (6.0 * h + seq)) * flops / a.bandwidth->bytes_per_second();
  }
  if (a.k)
    a.hidden = *a.k <= 1.0;
  else if (a.k_formula)
    a.hidden = *a.k_formula <= 1.0;
  return a;
}

std::vector<PassDecision> apply_memory_passes(const Scenario& scenario, Table& table,
                                              const std::vector<StageCost>& stage_costs) {
  const MemorySpec& mem = scenario.memory;
  std::vector<PassDecision> out;
  auto check_stages = [&](const std::vector<std::int32_t>& stages, const SourceLocation& where,
                          const char* key) {
    for (std::int32_t s : stages) {
      if (s >= table.stages) {
        throw InputError(
            {Diagnostic{where, key,
                        fmt::format("stage {} does not exist: the table has stages 0..{}", s,
                                    table.stages - 1)}});
      }
    }
  };
  if (mem.recompute.policy != MemoryPolicy::None) {
    check_stages(mem.recompute.stages, mem.recompute_where, "memory.recompute.stages");
    PassResult r = apply_recompute_pass(table, stage_costs, mem.recompute);
    table = std::move(r.table);
    out.push_back(std::move(r.decision));
  }
  if (mem.offload.policy != MemoryPolicy::None) {
    check_stages(mem.offload.stages, mem.offload_where, "memory.offload.stages");
    OffloadBandwidths bw = offload_bandwidths(scenario);
    if (bw.d2h.size() != static_cast<std::size_t>(table.devices)) {
      throw InputError(
          {Diagnostic{mem.offload_where, "memory.offload",
                      "cannot offload: no host is reachable from every GPU (see docs/memory.md)"}});
    }
    // The pass reads the idealized timings of the table it transforms, as data.
    SimulationResult ideal = simulate(make_engine_input(scenario, table, stage_costs, true));
    TableTimings timings(ideal.timings.size());
    for (std::size_t d = 0; d < ideal.timings.size(); ++d) {
      for (const OpTiming& t : ideal.timings[d]) timings[d].push_back(OpWindow{t.start, t.end});
    }
    OffloadSettings settings = mem.offload;
    settings.d2h = bw.d2h;
    settings.h2d = bw.h2d;
    PassResult o = apply_offload_pass(table, stage_costs, timings, settings);
    table = std::move(o.table);
    out.push_back(std::move(o.decision));
  }
  return out;
}

EngineInput make_engine_input(const Scenario& scenario, const Table& table,
                              const std::vector<StageCost>& stage_costs, bool idealized) {
  EngineInput in;
  in.table = &table;
  in.stage_costs = stage_costs;
  in.release = scenario.memory.release;
  if (idealized) {
    in.network = NetworkModel::None;
    return in;
  }
  const CommunicationSpec& comm = scenario.communication;
  if (comm.kind == CommunicationKind::FixedDelay) {
    in.network = NetworkModel::FixedDelay;
    in.fixed_delay = comm.delay;
  } else {
    in.network = NetworkModel::Topology;
    in.topology = comm.topology.get();
    in.device_vertex = comm.placement;
    in.sync = make_sync_plan(scenario, table);  // docs/parallelism.md
  }
  in.offload_bandwidth = scenario.memory.offload_bandwidth;
  in.host_capacity = scenario.memory.host_capacity;
  in.compute_slowdown = scenario.faults.slowdown;
  for (const LinkFaultSpec& f : scenario.faults.links) {
    for (LinkId l : f.links) {
      in.link_faults.push_back(
          LinkFault{l, f.at, f.bandwidth ? f.bandwidth->bytes_per_second() : 0.0});
    }
  }
  const auto& budget = scenario.memory.budget;
  if (budget.size() == 1) {
    in.memory_budget.assign(static_cast<std::size_t>(table.devices), budget.front());
  } else if (!budget.empty()) {
    in.memory_budget = budget;
  }
  return in;
}

ScheduleRun run_schedule(const Scenario& scenario, const Generator& generator,
                         const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers,
                         const std::function<void(const std::string&)>& progress) {
  auto started = std::chrono::steady_clock::now();
  ScheduleRun run;
  run.schedule = generator.info.name;
  run.params = request.params;
  run.label = make_label(generator, request.params);
  GeneratorInput in = make_generator_input(scenario, request.params);
  in.progress = progress;
  run.table = generate_from(scenario, generator, request, in);
  run.generate_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (run.table.stages != scenario.stages * run.table.chunks) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: the table has {} stages with {} chunks, but the scenario has {} "
                    "pipeline stages",
                    generator.info.name, run.table.stages, run.table.chunks, scenario.stages)}});
  }
  run.stage_costs = scenario.costs.for_table(run.table.chunks);
  // Memory passes after generation, before validation and both replays (the idealized replay is
  // of the transformed table too; its copies take no time).
  run.passes = apply_memory_passes(scenario, run.table, run.stage_costs);
  if (!run.passes.empty()) {
    try {
      require_valid_table(run.table, generator.info.name + " after the memory passes");
    } catch (const InvalidTableError& e) {
      throw InputError({Diagnostic{request.where, "schedules", e.what()}});
    }
  }
  if (generator.formula) {
    run.formula = generator.formula(in);
    run.has_formula =
        run.formula.bubble_ratio.has_value() || run.formula.peak_activation_units.has_value();
  }
  run.ideal = simulate(make_engine_input(scenario, run.table, run.stage_costs, true));
  Engine engine(make_engine_input(scenario, run.table, run.stage_costs, false));
  for (EngineObserver* o : observers) engine.add_observer(o);
  run.simulation = engine.run();
  if (scenario.faults.any()) {
    EngineInput healthy = make_engine_input(scenario, run.table, run.stage_costs, false);
    healthy.compute_slowdown.clear();
    healthy.link_faults.clear();
    run.fault_free = simulate(std::move(healthy));
  }
  run.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry,
                         const std::vector<std::string>& only, const ScenarioRunHooks& hooks) {
  ScenarioRun out;
  auto selected = [&](const ScheduleRequest& r) {
    return only.empty() || std::find(only.begin(), only.end(), r.name) != only.end();
  };
  std::size_t total = 0, position = 0;
  for (const ScheduleRequest& request : scenario.schedules) total += selected(request) ? 1 : 0;
  for (const ScheduleRequest& request : scenario.schedules) {
    if (!selected(request)) continue;
    const Generator* generator = registry.find(request.name);
    if (generator == nullptr) {
      throw InputError({Diagnostic{request.where, "schedules",
                                   fmt::format("unknown schedule '{}'", request.name)}});
    }
    if (hooks.on_schedule) hooks.on_schedule(position++, total, request);
    std::vector<EngineObserver*> observers;
    if (hooks.observers) observers = hooks.observers(out.runs.size());
    if (scenario.schedules_defaulted) {
      try {
        out.runs.push_back(
            run_schedule(scenario, *generator, request, observers, hooks.on_progress));
      } catch (const InputError& e) {
        out.skipped.push_back({request.name, e.diagnostics().front().message});
      }
    } else {
      out.runs.push_back(run_schedule(scenario, *generator, request, observers, hooks.on_progress));
    }
  }
  return out;
}

}  // namespace bubblesim
