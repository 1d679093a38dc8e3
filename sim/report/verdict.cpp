#include "sim/report/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/report/idle_split_report.h"
#include "sim/report/metric_format.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

constexpr double kTieTolerance = 1e-12;  // relative: equal times share a rank
constexpr const char* kDefaultBaseline = "1f1b";

const ScheduleRun* find_run(const ScenarioRun& result, const std::string& name) {
  for (const ScheduleRun& r : result.runs)
    if (r.label == name) return &r;
  for (const ScheduleRun& r : result.runs)
    if (r.schedule == name) return &r;
  return nullptr;
}

bool named_in(const ScenarioRun& result, const std::string& name) {
  if (find_run(result, name) != nullptr) return true;
  for (const InfeasibleSchedule& i : result.infeasible)
    if (i.label == name || i.schedule == name) return true;
  for (const SkippedSchedule& s : result.skipped)
    if (s.schedule == name) return true;
  return false;
}

/// The ranking metric's Monte Carlo statistic (`sd` or `p95`), none without variability.
std::optional<double> spread(const Scenario& scenario, const ScheduleRun& run,
                             const std::string& stat) {
  const std::string key = ranking_metric().key == "iteration_time_s"
                              ? "simulation.iteration_time_" + stat + "_s"
                              : "simulation.makespan_" + stat + "_s";
  const Metric* m = find_metric(key);
  return m != nullptr ? metric_value(*m, scenario, run).number : std::nullopt;
}

}  // namespace

const Metric& ranking_metric() {
  if (const Metric* m = find_metric("simulation.iteration_time_s")) return *m;
  return *find_metric("simulation.makespan_s");
}

std::optional<double> peak_memory_fraction(const Scenario& scenario, const ScheduleRun& run) {
  const std::vector<Bytes>& budget = scenario.memory.budget;
  const std::vector<Bytes>& peak = run.simulation.metrics.memory.peak_memory_per_device;
  if (budget.empty()) return std::nullopt;
  std::optional<double> most;
  for (std::size_t d = 0; d < peak.size(); ++d) {
    const Bytes b = budget.size() == 1 ? budget.front() : budget[std::min(d, budget.size() - 1)];
    if (b <= Bytes::zero()) continue;
    most = std::max(most.value_or(0.0), peak[d] / b);
  }
  return most;
}

std::string failure_line(const ScheduleRun& run) {
  const SimulationResult& s = run.simulation;
  if (s.status == RunStatus::OutOfMemory && !s.out_of_memory.empty()) {
    const OutOfMemory& o = s.out_of_memory.front();
    const std::string where = o.host.empty()
                                  ? fmt::format("device {}", o.device)
                                  : fmt::format("host '{}' (device {})", o.host, o.device);
    return fmt::format("out of memory on {} at {} during {}: {} over the {} {}", where,
                       format_metric(MetricUnit::Seconds, o.time.seconds()), o.op,
                       format_metric(MetricUnit::Bytes, o.over.as_double()),
                       format_metric(MetricUnit::Bytes, o.budget.as_double()),
                       o.host.empty() ? "budget" : "host capacity");
  }
  const std::string status(run_status_name(s.status));
  const std::string first = s.failure.substr(0, s.failure.find('\n'));
  if (first.empty()) return status;
  return first.rfind(status, 0) == 0 ? first : status + ": " + first;
}

std::vector<std::string> a2a_overlap_notes(const Scenario& scenario, const ScenarioRun& result) {
  std::vector<std::string> out;
  if (!scenario.parallelism.overlap.a2a) return out;
  for (const ScheduleRun& r : result.runs) {
    if (r.table.chunks != 1 || r.table.devices < 2 || r.table.placement.replicas() != 1) continue;
    std::int64_t pairs = 0;
    for (const PassDecision& p : r.passes) {
      if (p.kind != PassKind::A2aPairing) continue;
      for (std::int64_t n : p.count_per_device) pairs += n;
    }
    if (pairs == 0) continue;
    out.push_back(fmt::format(
        "note: {}: parallelism.a2a_overlap paired {} backward + forward ops on a pipeline of one "
        "chunk per device; each pair waits on its neighbours' pairs, so the hidden all-to-all is "
        "paid back in stalls and {} is usually slower with it (docs/moe.md); overlap with an "
        "interleaved or DualPipe schedule, or set a2a_overlap: false",
        r.label, pairs, r.label));
  }
  return out;
}

Verdict make_verdict(const Scenario& scenario, const ScenarioRun& result,
                     const std::string& baseline) {
  Verdict v;
  v.by = &ranking_metric();
  v.notes = a2a_overlap_notes(scenario, result);
  for (const CostsSpec::NotApplied& n : scenario.costs.not_applied)
    v.notes.push_back(fmt::format("note: {} is off: {}", n.key, n.reason));
  if (scenario.model && !scenario.costs.times_key.empty())
    v.notes.push_back(fmt::format(
        "note: TFLOP/s/GPU and MFU count the model's FLOPs over op times that {} gives, not "
        "ones derived from the model (op times faster than the GPU's peak are refused)",
        scenario.costs.times_key));
  if (!baseline.empty() && !named_in(result, baseline)) {
    std::vector<std::string> names;
    for (const ScheduleRun& r : result.runs) names.push_back(r.label);
    throw InputError(fmt::format("--baseline: '{}' is not a schedule of this run (it ran: {})",
                                 baseline, fmt::join(names, ", ")));
  }
  for (const ScheduleRun& r : result.runs) {
    if (r.simulation.status != RunStatus::Ok) {
      v.failed.push_back(
          {r.label, std::string(run_status_name(r.simulation.status)), failure_line(r)});
      continue;
    }
    MetricValue time = metric_value(*v.by, scenario, r);
    v.ranked.push_back({&r, 0, time.number.value_or(0.0), std::nullopt, spread(scenario, r, "sd"),
                        spread(scenario, r, "p95")});
  }
  if (auto w = stage_imbalance_warning(scenario, result)) v.warnings.push_back(*w);
  for (const InfeasibleSchedule& i : result.infeasible)
    v.failed.push_back({i.label, "infeasible", "infeasible: " + i.summary()});
  for (const SkippedSchedule& s : result.skipped)
    v.failed.push_back({s.schedule, "skipped", "skipped: " + s.reason});

  std::stable_sort(v.ranked.begin(), v.ranked.end(),
                   [](const RankedSchedule& a, const RankedSchedule& b) {
                     return a.time_s < b.time_s * (1.0 - kTieTolerance);
                   });
  for (std::size_t i = 0; i < v.ranked.size(); ++i) {
    const bool tie = i > 0 && v.ranked[i].time_s <= v.ranked[i - 1].time_s * (1.0 + kTieTolerance);
    v.ranked[i].rank = tie ? v.ranked[i - 1].rank : i + 1;
  }

  const std::string wanted = baseline.empty() ? kDefaultBaseline : baseline;
  const ScheduleRun* base = find_run(result, wanted);
  if (base == nullptr) {
    v.baseline_note = baseline.empty()
                          ? fmt::format(
                                "no speed-up: {} is not in this run (choose a baseline "
                                "with --baseline NAME)",
                                kDefaultBaseline)
                          : fmt::format("no speed-up: the baseline {} did not run", wanted);
    return v;
  }
  if (base->simulation.status != RunStatus::Ok) {
    v.baseline_note = fmt::format("no speed-up: the baseline {} failed ({})", base->label,
                                  run_status_name(base->simulation.status));
    return v;
  }
  v.baseline = base->label;
  const double base_time = metric_value(*v.by, scenario, *base).number.value_or(0.0);
  for (RankedSchedule& r : v.ranked) {
    if (r.time_s > 0.0) r.speedup_vs_baseline = base_time / r.time_s;
  }
  return v;
}

}  // namespace bubblesim
