#include "tools/runner/scenario_runner.h"

#include <chrono>

#include <fmt/format.h>

#include "schedules/validator.h"
#include "sim/engine/engine.h"

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
  if (scenario.communication.kind == CommunicationKind::FixedDelay) in.comm_delay = scenario.communication.delay;
  if (!scenario.memory.budget.empty()) in.memory_budget = scenario.memory.budget.front();
  return in;
}

Table generate_table(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request) {
  GeneratorInput in = make_generator_input(scenario, request.params);
  Table table;
  try {
    table = generator.generate(in);
  } catch (const ScheduleConstraintError& e) {
    throw InputError({Diagnostic{request.where, "schedules", fmt::format("{}: {}", generator.info.name, e.what())}});
  }
  try {
    require_valid_table(table, generator.info.name);
  } catch (const InvalidTableError& e) {
    throw InputError({Diagnostic{request.where, "schedules", e.what()}});
  }
  return table;
}

EngineInput make_engine_input(const Scenario& scenario, const Table& table, const std::vector<StageCost>& stage_costs,
                              bool idealized) {
  EngineInput in;
  in.table = &table;
  in.stage_costs = stage_costs;
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
  }
  const auto& budget = scenario.memory.budget;
  if (budget.size() == 1) {
    in.memory_budget.assign(static_cast<std::size_t>(table.devices), budget.front());
  } else if (!budget.empty()) {
    in.memory_budget = budget;
  }
  return in;
}

ScheduleRun run_schedule(const Scenario& scenario, const Generator& generator, const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers) {
  auto started = std::chrono::steady_clock::now();
  ScheduleRun run;
  run.schedule = generator.info.name;
  run.params = request.params;
  run.label = make_label(generator, request.params);
  run.table = generate_table(scenario, generator, request);
  if (run.table.stages != scenario.stages * run.table.chunks) {
    throw InputError({Diagnostic{request.where, "schedules",
                                 fmt::format("{}: the table has {} stages with {} chunks, but the scenario has {} "
                                             "pipeline stages",
                                             generator.info.name, run.table.stages, run.table.chunks, scenario.stages)}});
  }
  run.stage_costs = scenario.costs.for_table(run.table.chunks);
  if (generator.formula) {
    run.formula = generator.formula(make_generator_input(scenario, request.params));
    run.has_formula = run.formula.bubble_ratio.has_value() || run.formula.peak_activation_units.has_value();
  }
  run.ideal = simulate(make_engine_input(scenario, run.table, run.stage_costs, true));
  Engine engine(make_engine_input(scenario, run.table, run.stage_costs, false));
  for (EngineObserver* o : observers) engine.add_observer(o);
  run.simulation = engine.run();
  run.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry, const std::vector<std::string>& only,
                         const ScenarioRunHooks& hooks) {
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
      throw InputError({Diagnostic{request.where, "schedules", fmt::format("unknown schedule '{}'", request.name)}});
    }
    if (hooks.on_schedule) hooks.on_schedule(position++, total, request);
    std::vector<EngineObserver*> observers;
    if (hooks.observers) observers = hooks.observers(out.runs.size());
    if (scenario.schedules_defaulted) {
      try {
        out.runs.push_back(run_schedule(scenario, *generator, request, observers));
      } catch (const InputError& e) {
        out.skipped.push_back({request.name, e.diagnostics().front().message});
      }
    } else {
      out.runs.push_back(run_schedule(scenario, *generator, request, observers));
    }
  }
  return out;
}

}  // namespace bubblesim
