#include "sim/runner/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bubblesim {
namespace {

ScheduleRequest default_request(const Generator& generator, const Scenario& scenario) {
  ScheduleRequest request;
  request.name = generator.info.name;
  request.params = ParamValues::defaults(generator.info.params);
  request.where = SourceLocation{scenario.labels.file, 0, 0};
  return request;
}

const Generator& find_generator(const Registry& registry, const std::string& name) {
  const Generator* g = registry.find(name);
  if (g == nullptr) throw InputError(registry.unknown_name_message(name));
  return *g;
}

}  // namespace

std::optional<double> bubble_factor(double value, double reference) {
  if (!std::isfinite(value) || !std::isfinite(reference) || reference <= 0.0) return std::nullopt;
  return value / reference;
}

std::vector<DeviceMemoryDecisions> memory_decisions(const Scenario& scenario,
                                                    const ScheduleRun& run) {
  const Table& table = run.table;
  const Metrics& m = run.simulation.metrics;
  std::vector<DeviceMemoryDecisions> out(static_cast<std::size_t>(table.devices));
  for (std::size_t d = 0; d < out.size(); ++d) {
    DeviceMemoryDecisions& dev = out[d];
    for (const Op& op : table.device_ops[d]) {
      const StageCost& c = run.stage_costs.at(static_cast<std::size_t>(op.stage));
      switch (op.kind) {
        case OpKind::Offload:
          ++dev.offloaded;
          dev.offloaded_bytes += c.activation;
          break;
        case OpKind::Reload:
          ++dev.reloaded;
          dev.reloaded_bytes += c.activation;
          break;
        case OpKind::Recompute:
          ++dev.recomputed;
          dev.recompute_saved += std::max(Bytes::zero(), c.activation - c.stage_input);
          break;
        default:
          break;
      }
      const bool backward = op.kind == OpKind::Backward || op.kind == OpKind::ForwardBackward;
      const std::int32_t bs = op.kind == OpKind::ForwardBackward ? op.backward_stage : op.stage;
      const StageCost::BackwardRecompute& r =
          run.stage_costs.at(static_cast<std::size_t>(bs)).backward_recompute;
      if (backward && (r.time > Time::zero() || r.units > 0)) {
        ++dev.recomputed_in_backward;
        dev.recompute_units += r.units;
        dev.recompute_saved += r.not_stored;
        dev.recompute_unit = std::max(dev.recompute_unit, r.unit);
      }
    }
    if (d < m.memory.peak_activation_per_device.size())
      dev.peak_activation = m.memory.peak_activation_per_device[d];
    if (d < m.memory.peak_memory_per_device.size())
      dev.peak_memory = m.memory.peak_memory_per_device[d];
    dev.budget = memory_budget_of_device(scenario.memory, static_cast<std::int32_t>(d));
  }
  return out;
}

ScheduleExplanation explain_schedule(const Scenario& scenario, const Registry& registry,
                                     const std::string& name) {
  const Generator& generator = find_generator(registry, name);
  ScheduleExplanation out;
  out.name = name;

  // The subject: the scenario's first entry for `name`, else the generator's defaults.
  std::optional<std::size_t> subject_index;
  for (std::size_t i = 0; i < scenario.schedules.size() && !subject_index; ++i) {
    if (scenario.schedules[i].name == name) subject_index = i;
  }
  out.listed = subject_index.has_value() && !scenario.schedules[*subject_index].defaulted;
  const ScheduleRequest subject =
      subject_index ? scenario.schedules[*subject_index] : default_request(generator, scenario);
  const ResolvedScenario resolved = resolve(scenario);
  out.rows.push_back({run_schedule(resolved, generator, subject), true, out.listed});

  // Baselines: the scenario's other entries (a schedule the user listed must fit, as in `run`;
  // defaulted lists skip what does not), then the default baselines it does not list.
  for (std::size_t i = 0; i < scenario.schedules.size(); ++i) {
    if (subject_index && i == *subject_index) continue;
    const ScheduleRequest& request = scenario.schedules[i];
    const Generator& g = find_generator(registry, request.name);
    if (request.defaulted) {
      try {
        out.rows.push_back({run_schedule(resolved, g, request), false, false});
      } catch (const InfeasibleScheduleError& e) {
        out.skipped.push_back({request.name, e.outcome().label + ": " + e.outcome().summary()});
      } catch (const InputError& e) {
        out.skipped.push_back({request.name, e.diagnostics().front().message});
      }
    } else {
      out.rows.push_back({run_schedule(resolved, g, request), false, true});
    }
  }
  for (std::string_view view : kExplainBaselines) {
    const std::string baseline(view);
    const bool present = baseline == name ||
                         std::any_of(scenario.schedules.begin(), scenario.schedules.end(),
                                     [&](const ScheduleRequest& r) { return r.name == baseline; });
    const Generator* g = registry.find(baseline);
    if (present || g == nullptr)
      continue;  // a registry without it (plugins only) has no such baseline
    try {
      out.rows.push_back({run_schedule(resolved, *g, default_request(*g, scenario)), false, false});
    } catch (const InfeasibleScheduleError& e) {
      out.skipped.push_back({baseline, e.outcome().label + ": " + e.outcome().summary()});
    } catch (const InputError& e) {
      out.skipped.push_back({baseline, e.diagnostics().front().message});
    }
  }
  out.devices = memory_decisions(scenario, out.subject().run);
  return out;
}

}  // namespace bubblesim
