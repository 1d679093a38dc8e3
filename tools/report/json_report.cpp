#include "tools/report/json_report.h"

#include "tools/report/ranking.h"
#include "tools/report/report_format.h"
#include "tools/report/resolved_scenario_json.h"
#include "tools/runner/offload_analysis.h"

namespace bubblesim {

using report_format::optional_number;

namespace {

nlohmann::json seconds_list(const std::vector<Time>& ts) {
  nlohmann::json out = nlohmann::json::array();
  for (Time t : ts) out.push_back(t.seconds());
  return out;
}

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
  nlohmann::json j = {{"name", d.name},
                      {"policy", memory_policy_name(d.policy)},
                      {"count_per_device", d.count_per_device},
                      {"bytes_per_device", bytes_list(d.bytes_per_device)},
                      {"stages", d.stages},
                      {"candidates", d.candidates}};
  if (d.name == "offload") {
    j["rejected"] = d.rejected;
    j["prefetch"] = d.prefetch;
  }
  return j;
}

}  // namespace

nlohmann::json schedule_run_to_json(const ScheduleRun& run) {
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
                {"ops", run.table.op_count()}};
  if (run.has_formula ||
      !run.formula.note.empty()) {  // a note without a closed form: the optimizer's
    nlohmann::json f;
    f["bubble_ratio"] = run.formula.bubble_ratio ? nlohmann::json(*run.formula.bubble_ratio)
                                                 : nlohmann::json(nullptr);
    f["peak_activation_units"] = run.formula.peak_activation_units
                                     ? nlohmann::json(*run.formula.peak_activation_units)
                                     : nlohmann::json(nullptr);
    f["note"] = run.formula.note;
    j["formula"] = f;
  } else {
    j["formula"] = nullptr;
  }
  const Metrics& t = run.ideal.metrics;
  j["table"] = {{"makespan_s", t.makespan.seconds()},
                {"stage_span_max_s", t.stage_span_max.seconds()},
                {"bubble_ratio", t.bubble_ratio},
                {"bubble_ratio_span", t.bubble_ratio_span},
                {"peak_activation_units", t.peak_activation_units}};
  const Metrics& s = run.simulation.metrics;
  nlohmann::json sim;
  sim["makespan_s"] = s.makespan.seconds();
  sim["stage_span_max_s"] = s.stage_span_max.seconds();
  sim["bubble_ratio"] = s.bubble_ratio;
  sim["bubble_ratio_span"] = s.bubble_ratio_span;
  sim["peak_activation_bytes"] = s.peak_activation.count();
  sim["peak_activation_bytes_per_device"] = bytes_list(s.peak_activation_per_device);
  sim["peak_activation_time_s_per_device"] = seconds_list(s.peak_activation_time_per_device);
  sim["peak_activation_units"] = s.peak_activation_units;
  sim["peak_activation_units_per_device"] = s.peak_activation_units_per_device;
  sim["peak_memory_bytes_per_device"] = bytes_list(s.peak_memory_per_device);
  sim["exposed_comm_s"] = s.exposed_comm.seconds();
  sim["exposed_comm_s_per_device"] = seconds_list(s.exposed_comm_per_device);
  sim["peak_memory_time_s_per_device"] = seconds_list(s.peak_memory_time_per_device);
  sim["recompute_s"] = s.recompute_time.seconds();
  sim["offloaded_bytes"] = s.offloaded_bytes.count();
  sim["offloaded_bytes_per_device"] = bytes_list(s.offloaded_bytes_per_device);
  sim["exposed_offload_s"] = s.exposed_offload.seconds();
  sim["exposed_offload_s_per_device"] = seconds_list(s.exposed_offload_per_device);
  sim["d2h_busy_s_per_device"] = seconds_list(s.d2h_busy_per_device);
  sim["h2d_busy_s_per_device"] = seconds_list(s.h2d_busy_per_device);
  {
    // PCIe utilisation: copy-engine busy time over the makespan, per direction.
    nlohmann::json d2h = nlohmann::json::array(), h2d = nlohmann::json::array();
    const double span = s.makespan.seconds();
    for (std::size_t d = 0; d < s.d2h_busy_per_device.size(); ++d) {
      d2h.push_back(span > 0 ? s.d2h_busy_per_device[d].seconds() / span : 0.0);
      h2d.push_back(span > 0 ? s.h2d_busy_per_device[d].seconds() / span : 0.0);
    }
    sim["d2h_utilization_per_device"] = d2h;
    sim["h2d_utilization_per_device"] = h2d;
  }
  sim["busy_s_per_device"] = seconds_list(s.busy_per_device);
  sim["span_s_per_device"] = seconds_list(s.span_per_device);
  nlohmann::json links = nlohmann::json::array();
  for (const LinkUsage& l : s.links)
    links.push_back({{"link", l.name}, {"busy_s", l.busy.seconds()}, {"bytes", l.bytes.count()}});
  sim["links"] = links;
  // Gradient sync, optimizer and TP (docs/parallelism.md); zero without parallelism.
  sim["dp_sync_s"] = s.sync.dp_sync.seconds();
  sim["exposed_dp_sync_s"] = s.sync.exposed_dp_sync.seconds();
  sim["replica_sync_s"] = s.sync.replica_sync.seconds();
  sim["optimizer_s"] = s.sync.optimizer.seconds();
  sim["tp_comm_s"] = s.sync.tp_comm.seconds();
  if (s.sync.enabled) {
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveSummary& c : s.sync.collectives) {
      collectives.push_back({{"name", c.name},
                             {"algorithm", c.algorithm},
                             {"ranks", c.ranks},
                             {"count", c.count},
                             {"bytes", c.bytes.count()},
                             {"simulated_s", c.simulated.seconds()},
                             {"closed_form_s", c.closed_form.seconds()}});
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
  j["simulation"] = sim;
  nlohmann::json passes = nlohmann::json::array();
  for (const PassDecision& d : run.passes) passes.push_back(pass_json(d));
  j["passes"] = passes;
  std::uint64_t events = run.ideal.events + run.simulation.events;
  j["run"] = {
      {"wall_time_s", run.wall_time_s},
      {"generate_s", run.generate_s},
      {"events", events},
      {"events_per_s", run.wall_time_s > 0 ? static_cast<double>(events) / run.wall_time_s : 0.0}};
  return j;
}

nlohmann::json scenario_report_json(const Scenario& scenario, const ScenarioRun& result) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["scenario"] = resolved_scenario_json(result.resolved);
  nlohmann::json results = nlohmann::json::array();
  double wall = 0.0;
  std::uint64_t events = 0;
  for (const ScheduleRun& r : result.runs) {
    results.push_back(schedule_run_to_json(r));
    wall += r.wall_time_s;
    events += r.ideal.events + r.simulation.events;
  }
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
  j["ranking"] = {{"formula", ranking.formula},
                  {"table", ranking.table},
                  {"simulation", ranking.simulation},
                  {"changes", changes}};
  j["run"] = {{"wall_time_s", wall},
              {"events", events},
              {"events_per_s", wall > 0 ? static_cast<double>(events) / wall : 0.0}};
  return j;
}

}  // namespace bubblesim
