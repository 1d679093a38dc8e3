#include "sim/plan/plan_replay.h"

#include <algorithm>

#include "sim/engine/idle_split.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/throughput.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/overflow_error.h"

namespace bubblesim {

PlanReplay replay_candidate(const std::string& scenario_yaml, const std::string& name,
                            const std::string& base_dir, const Registry& registry) {
  PlanReplay out;
  ScenarioRun result;
  Scenario scenario;
  try {
    scenario = load_scenario_string(scenario_yaml, name, base_dir, registry);
    result = run_scenario(scenario, registry);
  } catch (const InputError& e) {
    out.status = "invalid";
    out.failure = e.diagnostics().empty() ? e.what() : e.diagnostics().front().message;
    return out;
  } catch (const OverflowError& e) {
    out.status = "invalid";
    out.failure = e.what();
    return out;
  }
  for (const Bytes& b : result.resolved.memory_budget) {
    out.memory_budget_bytes = out.memory_budget_bytes > 0
                                  ? std::min(out.memory_budget_bytes, b.as_double())
                                  : b.as_double();
  }
  if (result.runs.empty()) {
    out.status = "infeasible";
    out.failure = result.infeasible.empty() ? "no schedule ran" : result.infeasible[0].summary();
    return out;
  }
  const ScheduleRun& run = result.runs.front();
  const Metrics& m = run.simulation.metrics;
  for (const Bytes& b : m.memory.peak_memory_per_device)
    out.peak_memory_bytes = std::max(out.peak_memory_bytes, b.as_double());
  out.status = std::string(run_status_name(run.simulation.status));
  if (run.simulation.status != RunStatus::Ok) {
    out.failure = run.simulation.failure;
    return out;
  }
  const Time iteration =
      m.iteration.iteration_time > Time::zero() ? m.iteration.iteration_time : m.makespan;
  out.iteration_s = iteration.seconds();
  const Throughput t = throughput(scenario, out.iteration_s);
  out.tokens_per_s_per_gpu = t.tokens_per_s_per_gpu;
  out.mfu = t.mfu;
  out.model_tflops_per_gpu = t.model_tflops_per_gpu;
  static_cast<IterationParts&>(out) = iteration_parts(run, out.iteration_s);
  return out;
}

}  // namespace bubblesim
