#include "sim/runner/scenario_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "schedules/passes/a2a_pairing.h"
#include "schedules/passes/memory_passes.h"
#include "schedules/validator.h"
#include "sim/engine/engine.h"
#include "sim/engine/stream_replay.h"
#include "sim/runner/op_bound.h"
#include "sim/runner/stream_choice.h"
#include "sim/runner/table_costs.h"
#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

/// A generator's message without the "NAME: " it may start with (reports add the label).
std::string without_prefix(const std::string& message, const std::string& prefix) {
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

/// The outcome `infeasible` for a generator's ScheduleConstraintError.
InfeasibleScheduleError infeasible(const Generator& generator, const ScheduleRequest& request,
                                   const ScheduleConstraintError& e) {
  const SourceLocation& at = request.where;
  return InfeasibleScheduleError(InfeasibleSchedule{
      generator.info.name, schedule_label(generator, request.params),
      at.file.empty() ? "" : fmt::format("{}:{}:{}", at.file, at.line, at.column),
      without_prefix(e.what(), generator.info.name + ": "), e.facts(), e.remedy()});
}

bool has_all_to_all(const std::vector<StageCost>& costs) {
  return std::any_of(costs.begin(), costs.end(), [](const StageCost& c) {
    return c.moe.a2a_forward > Time::zero() || c.moe.a2a_backward > Time::zero();
  });
}

/// The pairing pass on `table` (in place), as a pass decision for the reports.
PassDecision pair_for_a2a_overlap(Table& table) {
  PairingResult r = pair_backward_forward(table);
  table = std::move(r.table);
  PassDecision d;
  d.kind = PassKind::A2aPairing;
  d.count_per_device = std::move(r.pairs_per_device);
  d.bytes_per_device.assign(d.count_per_device.size(), Bytes::zero());
  d.candidates = r.candidates;
  d.rejected = r.refused;
  return d;
}

/// Every device's static memory (weights, gradients and optimizer state of the table stages it
/// holds, each once) must fit its budget before any activation: otherwise the replay could only
/// report an overflow at t = 0. Bad input naming the budget's key, the device and what fits.
void check_static_memory(const ResolvedScenario& resolved, const Table& table,
                         const std::vector<StageCost>& stage_costs, const std::string& label) {
  if (resolved.memory_budget.empty()) return;
  std::vector<Bytes> held(static_cast<std::size_t>(table.devices), Bytes::zero());
  const auto stages_of = table.placement.stages_by_device(table.devices);
  for (std::int32_t d = 0; d < table.devices; ++d) {
    for (std::int32_t s : stages_of[static_cast<std::size_t>(d)]) {
      if (static_cast<std::size_t>(s) < stage_costs.size())
        held[static_cast<std::size_t>(d)] += stage_costs[static_cast<std::size_t>(s)].static_memory;
    }
  }
  std::vector<std::int32_t> over;
  for (std::int32_t d = 0; d < table.devices; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (du < resolved.memory_budget.size() && held[du] > resolved.memory_budget[du])
      over.push_back(d);
  }
  if (over.empty()) return;
  const MemorySpec& mem = resolved.scenario->memory;
  const auto d = static_cast<std::size_t>(over.front());
  const Bytes most = *std::max_element(held.begin(), held.end());
  throw InputError({Diagnostic{
      mem.budget_where, mem.budget_key,
      fmt::format("{}: device {} holds {} of static memory (the weights, gradients and optimizer "
                  "state of its stages) before any activation, more than its budget of {}{}: a "
                  "budget of at least {} fits the static memory of every device (or spread the "
                  "model over more pipeline stages, shard it with parallelism.zero, or use a "
                  "larger tensor-parallel group)",
                  label, over.front(), to_string(held[d]), to_string(resolved.memory_budget[d]),
                  over.size() > 1 ? fmt::format(" ({} devices are over)", over.size()) : "",
                  to_string(most))}});
}

/// generate_table with the generator input already built (run_schedule also gives it to formula()).
Table generate_from(const Scenario& scenario, const Generator& generator,
                    const ScheduleRequest& request, const GeneratorInput& in) {
  // Every stage of the table runs at least a forward and a backward per microbatch: refuse what
  // cannot fit under --max-ops before generating it (p = 65536, m = 10^6 or 2^31 chunks would
  // need terabytes).
  const OpBound bound =
      minimum_ops(generator, request.params, scenario.stages, scenario.microbatches);
  if (bound.ops > scenario.command_line.max_ops) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: {} need at least {} ops, more than the limit of {} (raise it with "
                    "--max-ops)",
                    generator.info.name, bound.shape, bound.ops, scenario.command_line.max_ops)}});
  }
  if (bound.virtual_stages > kMaxVirtualStages) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: {} make {} virtual stages, more than the limit of {} (each carries its "
                    "own costs and placement: kMaxVirtualStages in sim/runner/op_bound.h)",
                    generator.info.name, bound.shape, bound.virtual_stages, kMaxVirtualStages)}});
  }
  Table table;
  try {
    table = generator.generate(in);
  } catch (const ScheduleConstraintError& e) {
    throw infeasible(generator, request, e);
  }
  if (static_cast<std::int64_t>(table.op_count()) > scenario.command_line.max_ops) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: the table has {} ops, more than the limit of {} (raise it with "
                    "--max-ops)",
                    generator.info.name, table.op_count(), scenario.command_line.max_ops)}});
  }
  try {
    require_valid_table(table, generator.info.name);
  } catch (const InvalidTableError& e) {
    throw InputError({Diagnostic{request.where, "schedules", e.what()}});
  }
  return table;
}

/// A stage list of a memory pass must name stages of the table.
void check_pass_stages(const Table& table, const std::vector<std::int32_t>& stages,
                       const SourceLocation& where, const char* key) {
  for (std::int32_t s : stages) {
    if (s >= table.stages) {
      throw InputError(
          {Diagnostic{where, key,
                      fmt::format("stage {} does not exist: the table has stages 0..{}", s,
                                  table.stages - 1)}});
    }
  }
}

/// The offload pass's settings: the scenario's, with the resolved route bandwidths.
OffloadSettings offload_settings(const ResolvedScenario& resolved, const Table& table) {
  const MemorySpec& mem = resolved.scenario->memory;
  check_pass_stages(table, mem.offload.stages, mem.offload_where, "memory.offload.stages");
  if (resolved.offload.d2h.size() != static_cast<std::size_t>(table.devices)) {
    throw InputError(
        {Diagnostic{mem.offload_where, "memory.offload",
                    "cannot offload: no host is reachable from every GPU (see docs/memory.md)"}});
  }
  OffloadSettings settings = mem.offload;
  settings.d2h = resolved.offload.d2h;
  settings.h2d = resolved.offload.h2d;
  return settings;
}

TableTimings timings_of(const SimulationResult& replay) {
  TableTimings timings(replay.timings.size());
  for (std::size_t d = 0; d < replay.timings.size(); ++d) {
    for (const OpTiming& t : replay.timings[d]) timings[d].push_back(OpWindow{t.start, t.end});
  }
  return timings;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A planning generator's own estimates against the replay (docs/optimizer.md), in the note.
void compare_with_plan(ScheduleRun& run) {
  if (run.simulation.status != RunStatus::Ok) return;
  auto compare = [&](const char* what, const std::optional<Time>& planned, Time replayed) {
    if (!planned) return;
    const double p = planned->seconds(), r = replayed.seconds();
    run.formula.note += fmt::format(
        "; the plan's own estimate of the {} {:.6g} ms, the replay's {:.6g} ms ({:+.3g}%)", what,
        p * 1e3, r * 1e3, r > 0 ? 100.0 * (p - r) / r : 0.0);
  };
  compare("stage span", run.formula.planned_stage_span, run.simulation.metrics.stage_span_max);
  compare("iteration time", run.formula.planned_iteration_time,
          run.simulation.metrics.iteration.iteration_time);
}

}  // namespace

std::string schedule_label(const Generator& generator, const ParamValues& params) {
  std::vector<std::string> parts;
  for (const ParamSpec& spec : generator.info.params) {
    if (!params.has(spec.name)) continue;
    const ParamValue& v = params.all().at(spec.name);
    if (!spec.optional_default && v == spec.default_value) continue;
    // A text value (a file path) is the user's: its control characters shown, never raw.
    parts.push_back(fmt::format("{}={}", spec.name, visible_controls(to_string(v))));
  }
  if (parts.empty()) return generator.info.name;
  return fmt::format("{}({})", generator.info.name, fmt::join(parts, ","));
}

std::string InfeasibleSchedule::summary() const {
  std::string out = reason;
  if (!facts.empty()) {
    std::vector<std::string> parts;
    for (const ConstraintFact& f : facts) parts.push_back(f.name + " " + f.value);
    out += fmt::format(" ({})", fmt::join(parts, ", "));
  }
  if (!remedy.empty()) out += "; remedy: " + remedy;
  return out;
}

InfeasibleScheduleError::InfeasibleScheduleError(InfeasibleSchedule outcome)
    : std::runtime_error(fmt::format("{}{}: infeasible: {}",
                                     outcome.where.empty() ? "" : outcome.where + ": ",
                                     outcome.label, outcome.summary())),
      outcome_(std::move(outcome)) {}

Table generate_table(const ResolvedScenario& resolved, const Generator& generator,
                     const ScheduleRequest& request,
                     const std::function<void(const std::string&)>& progress) {
  GeneratorInput in = make_generator_input(resolved, request.params);
  in.progress = progress;
  Table table = generate_from(*resolved.scenario, generator, request, in);
  check_static_memory(resolved, table, table_costs(resolved, table.chunks, request),
                      schedule_label(generator, request.params));
  return table;
}

ScheduleRun run_schedule(const ResolvedScenario& resolved, const Generator& generator,
                         const ScheduleRequest& request,
                         const std::vector<EngineObserver*>& observers,
                         const std::function<void(const std::string&)>& progress) {
  const Scenario& scenario = *resolved.scenario;
  const auto started = std::chrono::steady_clock::now();
  ScheduleRun run;
  run.schedule = generator.info.name;
  run.params = request.params;
  run.label = schedule_label(generator, request.params);

  // 1. Generate, or open the order stream of a table too large to hold (stream_choice.h).
  GeneratorInput in = make_generator_input(resolved, request.params);
  in.progress = progress;
  std::unique_ptr<OrderStream> stream;
  try {
    stream = open_stream(resolved, generator, request, in, !observers.empty());
  } catch (const ScheduleConstraintError& e) {
    throw infeasible(generator, request, e);
  }
  if (stream) {
    run.table = stream->shape();
    run.streamed_ops = stream->op_count();
  } else {
    run.table = generate_from(scenario, generator, request, in);
  }
  run.effort.generate_s = seconds_since(started);
  if (run.table.stages != scenario.stages * run.table.chunks) {
    throw InputError({Diagnostic{
        request.where, "schedules",
        fmt::format("{}: the table has {} stages with {} chunks, but the scenario has {} "
                    "pipeline stages",
                    generator.info.name, run.table.stages, run.table.chunks, scenario.stages)}});
  }
  run.stage_costs = table_costs(resolved, run.table.chunks, request);
  check_static_memory(resolved, run.table, run.stage_costs, run.label);

  // 2. `parallelism.a2a_overlap` (docs/moe.md): each backward and the forward after it become
  // one overlapped F&B op where the stages have an expert all-to-all.
  if (scenario.parallelism.overlap.a2a && has_all_to_all(run.stage_costs)) {
    PassDecision pairing = pair_for_a2a_overlap(run.table);
    if (pairing.candidates > 0) run.passes.push_back(std::move(pairing));  // none: F&B already
  }

  // Memory passes (docs/memory.md): recompute, then offload on the idealized timings of the
  // recomputed table (a replay of its own, the pass's input); then validate the result.
  const MemorySpec& mem = scenario.memory;
  if (mem.recompute.policy != MemoryPolicy::None) {
    check_pass_stages(run.table, mem.recompute.stages, mem.recompute_where,
                      "memory.recompute.stages");
    PassResult r = apply_recompute_pass(run.table, run.stage_costs, mem.recompute);
    run.table = std::move(r.table);
    run.passes.push_back(std::move(r.decision));
  }
  if (mem.offload.policy != MemoryPolicy::None) {
    const OffloadSettings settings = offload_settings(resolved, run.table);
    const SimulationResult before =
        simulate(make_engine_input(resolved, run.table, run.stage_costs, Replay::Idealized));
    ++run.effort.replays;
    PassResult o = apply_offload_pass(run.table, run.stage_costs, timings_of(before), settings);
    run.table = std::move(o.table);
    run.passes.push_back(std::move(o.decision));
  }
  if (!run.passes.empty()) {
    try {
      require_valid_table(run.table, generator.info.name + " after the memory passes");
    } catch (const InvalidTableError& e) {
      throw InputError({Diagnostic{request.where, "schedules", e.what()}});
    }
  }

  // 3. The three levels: formula, idealized table, simulation (and the fault-free simulation).
  auto phase = [&](const char* what) {
    if (progress) progress(what);
  };
  phase("replaying the table");
  if (generator.formula) {
    run.formula = generator.formula(in);
    run.has_formula =
        run.formula.bubble_ratio.has_value() || run.formula.peak_activation_units.has_value();
  }
  if (stream) {
    // The streamed replays (sim/engine/stream_replay.h): no memory pass, no variability, no
    // observer (stream_choice.h refused them).
    run.ideal = simulate_streamed(
        make_engine_input(resolved, run.table, run.stage_costs, Replay::Idealized), *stream);
    run.simulation = simulate_streamed(
        make_engine_input(resolved, run.table, run.stage_costs, Replay::Simulated), *stream);
    run.effort.replays += 2;
    compare_with_plan(run);
    if (scenario.faults.any()) {
      run.fault_free = simulate_streamed(
          make_engine_input(resolved, run.table, run.stage_costs, Replay::FaultFree), *stream);
      ++run.effort.replays;
    }
    run.effort.wall_time_s = seconds_since(started);
    return run;
  }
  // The replays share their working arrays: the second finds the first's pages (no fresh
  // memory to fault in) and the run's peak holds one set, not one per replay.
  const auto scratch = make_replay_scratch();
  auto input = [&](Replay replay) {
    EngineInput engine_input = make_engine_input(resolved, run.table, run.stage_costs, replay);
    engine_input.scratch = scratch;
    return engine_input;
  };
  run.ideal = simulate(input(Replay::Idealized));
  phase("simulating on the cluster");
  const EngineInput simulated = input(Replay::Simulated);
  EngineInput fault_free = input(Replay::FaultFree);
  Engine engine(simulated);
  for (EngineObserver* o : observers) engine.add_observer(o);
  if (scenario.variability) {
    // 4. Variability (docs/variability.md): the Monte Carlo samples (each worker with its own
    // scratch), then the median sample again for the observers and the per-op outputs, and the
    // replay without noise.
    auto spec = std::make_shared<const VariabilitySpec>(*scenario.variability);
    // The work the samples do: every sample replays every iteration, each replay its ops and a
    // fixed cost (a tiny table's 10^7 samples are not free).
    const auto ops = static_cast<std::int64_t>(run.table.op_count());
    const std::int64_t iterations = std::max<std::int64_t>(simulated.iterations.count, 1);
    if (sampled_work(spec->samples, iterations, ops) > kMaxSampledOps) {
      const std::int64_t fit = kMaxSampledOps / sampled_work(1, iterations, ops);
      throw InputError(fmt::format(
          "variability.samples: {} samples x {} iterations of {} ({} ops, and {} for the fixed "
          "cost of each replay) are more than {} replayed ops (kMaxSampledOps in "
          "sim/runner/op_bound.h): use at most {} samples{}",
          spec->samples, iterations, run.label, ops, kReplayOverheadOps, kMaxSampledOps, fit,
          iterations > 1 ? " or fewer iterations (iteration.count)" : ""));
    }
    run.monte_carlo = run_monte_carlo(
        simulated, spec, scenario.command_line.threads,
        [&](std::uint64_t done, std::uint64_t total) {
          if (progress) progress(fmt::format("sampling {}/{} (variability.samples)", done, total));
        });
    const std::uint64_t median = run.monte_carlo->median_sample;
    run.simulation = engine.run(sample_durations(simulated, spec, median));
    run.noiseless = simulate(simulated);
    run.effort.replays += static_cast<std::int32_t>(spec->samples) + 3;
    fault_free.durations = sample_durations(fault_free, spec, median);
  } else {
    run.simulation = engine.run();
    run.effort.replays += 2;
  }
  compare_with_plan(run);
  if (scenario.faults.any()) {
    run.fault_free = simulate(std::move(fault_free));
    ++run.effort.replays;
  }
  run.effort.wall_time_s = seconds_since(started);
  return run;
}

ScenarioRun run_scenario(const Scenario& scenario, const Registry& registry,
                         const std::vector<std::string>& only, const ScenarioRunHooks& hooks) {
  const auto started = std::chrono::steady_clock::now();
  ScenarioRun out;
  if (hooks.on_progress) hooks.on_progress("setting up: stage costs, collectives, routes");
  out.resolved = resolve(scenario);
  out.setup_s = seconds_since(started);
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
    try {
      out.runs.push_back(
          run_schedule(out.resolved, *generator, request, observers, hooks.on_progress));
    } catch (const InfeasibleScheduleError& e) {
      // Defaulted schedules that do not fit the scenario are skipped; named ones are an outcome.
      if (request.defaulted)
        out.skipped.push_back({request.name, e.outcome().reason});
      else
        out.infeasible.push_back(e.outcome());
    } catch (const InputError& e) {
      if (!request.defaulted) throw;
      out.skipped.push_back({request.name, e.diagnostics().front().message});
    }
  }
  out.wall_time_s = seconds_since(started);
  return out;
}

}  // namespace bubblesim
