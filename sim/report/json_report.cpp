#include "sim/report/json_report.h"

#include <algorithm>
#include <cmath>

#include "sim/report/metric_table.h"
#include "sim/report/ranking.h"
#include "sim/report/report_format.h"
#include "sim/report/resolved_scenario_json.h"
#include "sim/report/verdict.h"
#include "sim/runner/offload_analysis.h"

namespace bubblesim {

using report_format::optional_number;

namespace {

nlohmann::json bytes_list(const std::vector<Bytes>& bs) {
  nlohmann::json out = nlohmann::json::array();
  for (Bytes b : bs) out.push_back(b.count());
  return out;
}

nlohmann::json param_value_json(const ParamValue& v) {
  struct Visitor {
    nlohmann::json operator()(std::int64_t x) const { return x; }
    nlohmann::json operator()(double x) const { return x; }
    nlohmann::json operator()(bool x) const { return x; }
    nlohmann::json operator()(const std::string& x) const { return x; }
    nlohmann::json operator()(Time x) const { return to_string(x); }
    nlohmann::json operator()(Bytes x) const { return to_string(x); }
  };
  return std::visit(Visitor{}, v);
}

nlohmann::json pass_json(const PassDecision& d) {
  nlohmann::json j = {{"name", pass_name(d.kind)},
                      {"policy", memory_policy_name(d.policy)},
                      {"count_per_device", d.count_per_device},
                      {"bytes_per_device", bytes_list(d.bytes_per_device)},
                      {"stages", d.stages},
                      {"candidates", d.candidates}};
  if (d.kind == PassKind::A2aPairing) j["rejected"] = d.rejected;
  if (d.in_backward) {  // recompute inside the backward (docs/memory.md)
    j["in_backward"] = true;
    j["units_per_backward"] = d.units;
    j["unit_bytes"] = d.unit.count();
  }
  if (d.kind == PassKind::Offload) {
    j["rejected"] = d.rejected;
    j["prefetch"] = d.prefetch;
  }
  return j;
}

nlohmann::json metric_json(const Metric& m, const MetricValue& v) {
  auto one = [&](double x) {
    if (m.unit == MetricUnit::Bytes || m.unit == MetricUnit::Count)
      return nlohmann::json(static_cast<std::int64_t>(std::llround(x)));
    return nlohmann::json(x);
  };
  if (m.shape == MetricShape::PerDevice) {
    nlohmann::json out = nlohmann::json::array();
    for (double x : v.per_device) out.push_back(one(x));
    return out;
  }
  return v.number ? one(*v.number) : nlohmann::json(nullptr);
}

/// run.flows: how the simulation solved its flows (docs/engine.md, "Symmetric flows"); null
/// without a topology.
nlohmann::json symmetry_json(const FlowSymmetry& f) {
  if (f.mode.empty()) return nullptr;
  return {{"mode", f.mode},
          {"reason", f.reason},
          {"laid_out", f.flows_laid_out},
          {"started", f.flows_started},
          {"solved", f.classes_started},
          {"classes", f.flow_classes}};
}

/// An infeasible schedule as a result entry: status, failure and the deciding numbers; no levels.
nlohmann::json infeasible_json(const InfeasibleSchedule& i) {
  nlohmann::json facts = nlohmann::json::array();
  for (const ConstraintFact& f : i.facts) facts.push_back({{"name", f.name}, {"value", f.value}});
  return {{"schedule", i.schedule},
          {"label", i.label},
          {"status", "infeasible"},
          {"failure", i.summary()},
          {"infeasible", {{"reason", i.reason}, {"facts", facts}, {"remedy", i.remedy}}},
          {"formula", nullptr},
          {"table", nullptr},
          {"simulation", nullptr}};
}

}  // namespace

nlohmann::json component_use_json(const ComponentUse& use) {
  nlohmann::json refused = nlohmann::json::object();
  for (const ComponentUse::Refusal& r : use.refused) refused[r.path] = r.by;
  return {{"engaged", use.engaged}, {"refused", refused}};
}

nlohmann::json schedule_run_to_json(const Scenario& scenario, const ScheduleRun& run) {
  nlohmann::json j;
  j["schedule"] = run.schedule;
  j["label"] = run.label;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : run.params.all()) params[name] = param_value_json(value);
  j["params"] = params;
  j["status"] = run_status_name(run.simulation.status);
  j["failure"] = run.simulation.failure.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(run.simulation.failure);
  if (run.fault_free) {
    j["fault_free"] = {{"status", run_status_name(run.fault_free->status)},
                       {"makespan_s", run.fault_free->metrics.makespan.seconds()}};
  }
  j["shape"] = {{"devices", run.table.devices},
                {"stages", run.table.stages},
                {"chunks", run.table.chunks},
                {"microbatches", run.table.microbatches},
                {"replicas", run.table.placement.replicas()},
                {"ops", run.op_count()}};
  // Every metric of the metric table, in its level's object (formula: null without a closed form
  // or a note).
  nlohmann::json levels = {{"formula", nlohmann::json::object()},
                           {"table", nlohmann::json::object()},
                           {"simulation", nlohmann::json::object()}};
  for (const Metric& m : metric_table()) {
    levels[std::string(metric_level_name(m.level))][std::string(m.key)] =
        metric_json(m, metric_value(m, scenario, run));
  }
  nlohmann::json& sim = levels["simulation"];
  if (run.has_formula || !run.formula.note.empty()) {
    j["formula"] = levels["formula"];
    j["formula"]["note"] = run.formula.note;
  } else {
    j["formula"] = nullptr;
  }
  j["table"] = levels["table"];
  const Metrics& s = run.simulation.metrics;
  nlohmann::json links = nlohmann::json::array();
  for (const LinkUsage& l : s.comm.links)
    links.push_back({{"link", l.name}, {"busy_s", l.busy.seconds()}, {"bytes", l.bytes.count()}});
  sim["links"] = std::move(links);  // moved: at 10^5 GPUs the list is hundreds of MB
  // Gradient sync, optimizer and TP (docs/parallelism.md); zero without parallelism.
  if (s.sync.enabled) {
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveSummary& c : s.sync.collectives) {
      collectives.push_back({{"name", c.name},
                             {"algorithm", c.algorithm},
                             {"ranks", c.ranks},
                             {"count", c.count},
                             {"bytes", c.bytes.count()},
                             {"simulated_s", c.simulated.seconds()},
                             {"closed_form_s", c.closed_form.seconds()},
                             {"bus_bandwidth_bytes_per_s", c.bus_bandwidth}});
    }
    sim["collectives"] = collectives;
    nlohmann::json classes = nlohmann::json::array();
    for (const LinkClassUsage& c : s.sync.link_classes) {
      classes.push_back(
          {{"class", c.name}, {"busy_s", c.busy.seconds()}, {"bytes", c.bytes.count()}});
    }
    sim["link_classes"] = classes;
  }
  nlohmann::json oom = nlohmann::json::array();
  for (const OutOfMemory& o : run.simulation.out_of_memory) {
    oom.push_back({{"device", o.device},
                   {"host", o.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.host)},
                   {"time_s", o.time.seconds()},
                   {"op", o.op},
                   {"over_bytes", o.over.count()},
                   {"budget_bytes", o.budget.count()}});
  }
  sim["out_of_memory"] = oom;
  j["simulation"] = std::move(sim);
  nlohmann::json passes = nlohmann::json::array();
  for (const PassDecision& d : run.passes) passes.push_back(pass_json(d));
  j["passes"] = passes;
  j["components"] = component_use_json(run.simulation.components);
  std::uint64_t events = run.ideal.events + run.simulation.events;
  j["run"] = {
      {"wall_time_s", run.effort.wall_time_s},
      {"generate_s", run.effort.generate_s},
      {"streamed", run.streamed_ops > 0},
      {"flows", symmetry_json(run.simulation.metrics.comm.symmetry)},
      {"events", events},
      {"events_per_s",
       run.effort.wall_time_s > 0 ? static_cast<double>(events) / run.effort.wall_time_s : 0.0}};
  // The table passes (sim/runner/table_passes.h): each one's wall time, and those --skip-pass
  // left out; absent when the scenario asks for none.
  if (!run.effort.passes.empty()) {
    nlohmann::json times = nlohmann::json::object();
    for (const PassTime& p : run.effort.passes) times[p.name] = p.seconds;
    j["run"]["passes_s"] = times;
  }
  if (!run.effort.skipped_passes.empty()) j["run"]["skipped_passes"] = run.effort.skipped_passes;

  return j;
}

nlohmann::json scenario_report_json(const Scenario& scenario, const ScenarioRun& result,
                                    const ReportOptions& options) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["scenario"] = resolved_scenario_json(result.resolved);
  nlohmann::json results = nlohmann::json::array();
  double wall = 0.0;
  std::uint64_t events = 0;
  for (const ScheduleRun& r : result.runs) {
    results.push_back(schedule_run_to_json(scenario, r));
    wall += r.effort.wall_time_s;
    events += r.ideal.events + r.simulation.events;
  }
  for (const InfeasibleSchedule& i : result.infeasible) results.push_back(infeasible_json(i));
  j["results"] = results;
  OffloadAnalysis a = analyze_offload(result.resolved);
  j["analysis"] = {
      {"offload_k", optional_number(a.k)},
      {"offload_k_stage", a.k_stage ? nlohmann::json(*a.k_stage) : nlohmann::json(nullptr)},
      {"offload_k_formula", optional_number(a.k_formula)},
      {"offload_hidden", a.hidden ? nlohmann::json(*a.hidden) : nlohmann::json(nullptr)},
      {"offload_bandwidth_bytes_per_s",
       a.bandwidth ? nlohmann::json(a.bandwidth->bytes_per_second()) : nlohmann::json(nullptr)}};
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedSchedule& s : result.skipped)
    skipped.push_back({{"schedule", s.schedule}, {"reason", s.reason}});
  j["skipped"] = skipped;
  Ranking ranking = rank_schedules(result);
  nlohmann::json changes = nlohmann::json::array();
  for (const RankingChange& c : ranking.changes) {
    changes.push_back({{"better", c.better},
                       {"worse", c.worse},
                       {"from", c.from_level},
                       {"to", c.to_level},
                       {"reason", c.reason}});
  }
  j["level_rankings"] = {{"formula", ranking.formula},
                         {"table", ranking.table},
                         {"simulation", ranking.simulation},
                         {"changes", changes}};
  // The verdict: schedules that ran without failing, fastest first.
  const Verdict verdict = make_verdict(scenario, result, options.baseline);
  nlohmann::json ranked = nlohmann::json::array();
  for (const RankedSchedule& r : verdict.ranked) {
    ranked.push_back({{"schedule", r.run->label},
                      {"rank", r.rank},
                      {"time_s", r.time_s},  // ranking_metric's value, as the verdict shows it
                      {"speedup_vs_baseline", optional_number(r.speedup_vs_baseline)}});
  }
  j["ranking"] = ranked;
  j["ranking_metric"] = verdict.by->name();
  if (!verdict.warnings.empty()) j["warnings"] = verdict.warnings;
  j["baseline"] =
      verdict.baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(verdict.baseline);
  // The whole run: loading and resolving the scenario (setup_s), then every schedule (their
  // own wall_time_s, which events_per_s divides by).
  j["run"] = {{"wall_time_s", result.load_s + std::max(result.wall_time_s, wall)},
              {"setup_s", result.load_s + result.setup_s},
              {"events", events},
              {"events_per_s", wall > 0 ? static_cast<double>(events) / wall : 0.0}};
  return j;
}

}  // namespace bubblesim
