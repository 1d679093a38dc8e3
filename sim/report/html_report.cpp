#include "sim/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sim/report/html_assets.h"
#include "sim/report/html_comparison.h"
#include "sim/report/html_distribution.h"
#include "sim/report/html_escape.h"
#include "sim/report/html_iteration_tail.h"
#include "sim/report/html_moe_phases.h"
#include "sim/report/html_table.h"
#include "sim/report/html_time.h"
#include "sim/report/html_timeline_bins.h"
#include "sim/report/html_topology.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/metric_format.h"
#include "sim/report/ranking.h"
#include "sim/report/report_format.h"
#include "sim/report/report_rows.h"
#include "sim/report/sync_tables.h"
#include "sim/report/verdict.h"

namespace bubblesim {
namespace {

/// A run's data for the script; `bins`: aggregated (only the exact ops of its window, the
/// utilisation bins and the downsampled memory).
/// The report script with the views this report needs patched in.
/// report.js with the views this page needs where it says "views" (html_assets.h).
std::string script(bool moe, bool tails, bool comm) {
  std::string s = html_asset_report_js();
  std::string views;
  if (moe) views += html_asset_view_moe_phases_js();
  if (tails) views += html_asset_view_iteration_tail_js();
  if (comm) views += html_asset_view_comm_lanes_js();
  if (views.empty()) return s;
  const std::string marker = "  /* views */\n";
  const std::size_t at = s.find(marker);
  if (at == std::string::npos) throw std::logic_error("report.js has no \"views\" line");
  s.insert(at + marker.size(), views);
  return s;
}

nlohmann::json run_data(const Scenario& scenario, const ScenarioRun& result, const ScheduleRun& run,
                        const MemoryTimeline* memory, const CommLaneRecorder* comm,
                        const std::optional<TimelineBins>& bins) {
  const std::int64_t exact_until =
      bins ? bins->exact_until().ps() : std::numeric_limits<std::int64_t>::max();
  nlohmann::json j;
  j["label"] = run.label;
  j["status"] = run_status_name(run.simulation.status);
  j["devices"] = run.table.devices;
  j["makespan_us"] = html_us(run.simulation.metrics.makespan);
  j["table_ops"] = run.table.op_count();
  nlohmann::json ops = nlohmann::json::array();
  std::size_t chunks = 1;
  for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
    const auto& device_ops = run.table.device_ops[d];
    // Chunk (virtual stage) of an op: the rank of its stage among the device's stages.
    std::vector<std::int32_t> stages;
    for (const Op& op : device_ops) stages.push_back(op.stage);
    std::sort(stages.begin(), stages.end());
    stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
    chunks = std::max(chunks, stages.size());
    for (std::size_t i = 0; i < device_ops.size(); ++i) {
      const Op& op = device_ops[i];
      const OpTiming& t = run.simulation.timings[d][i];
      if (t.start.ps() < 0 || t.end.ps() < 0) continue;  // never ran (deadlock)
      if (t.start.ps() >= exact_until) continue;         // in the utilisation bins only
      std::string letter(1, op_kind_letter(op.kind));
      std::string mb = op.kind == OpKind::ForwardBackward
                           ? fmt::format("{}|{}", op.microbatch, op.backward_microbatch)
                           : std::to_string(op.microbatch);
      const auto chunk = std::lower_bound(stages.begin(), stages.end(), op.stage) - stages.begin();
      ops.push_back({d, letter, mb, html_us(t.start), html_us(t.end), to_string(op), chunk});
    }
  }
  j["ops"] = ops;
  j["chunks"] = chunks;
  // MoE only (html_moe_phases.h): the ops' phase slices and the experts' memory per device.
  nlohmann::json phases = moe_phase_slices(
      result.resolved, run,
      bins ? html_us(bins->exact_until()) : std::numeric_limits<double>::infinity());
  if (!phases.empty()) j["phases"] = std::move(phases);
  nlohmann::json experts = expert_memory_per_device(run);
  if (!experts.empty()) j["experts"] = std::move(experts);
  // With a gradient sync (html_iteration_tail.h): each device's exposed sync and optimizer step.
  nlohmann::json tails = iteration_tails(run);
  if (!tails.empty()) j["tails"] = std::move(tails);
  // The communication lanes (html_comm_lanes.h) and the pipeline stages each row holds.
  nlohmann::json lanes = comm_lane_slices(
      result.resolved, run, comm,
      bins ? html_us(bins->exact_until()) : std::numeric_limits<double>::infinity());
  if (!lanes.empty()) j["comm"] = std::move(lanes);
  nlohmann::json stages = nlohmann::json::array();
  for (const std::vector<std::int32_t>& held :
       run.table.placement.stages_by_device(run.table.devices))
    stages.push_back(held);
  j["stages"] = std::move(stages);
  nlohmann::json mem = nlohmann::json::array();
  if (memory != nullptr && bins) {
    mem = downsampled_memory(*memory, *bins);
  } else if (memory != nullptr) {
    for (std::int32_t d = 0; d < memory->devices(); ++d) {
      nlohmann::json series = nlohmann::json::array();
      for (const MemorySample& m : memory->samples(d))
        series.push_back({html_us(m.time), m.activation.count(), m.total.count()});
      mem.push_back(series);
    }
  }
  j["memory"] = mem;
  nlohmann::json budget = nlohmann::json::array();
  for (std::int32_t d = 0; d < run.table.devices; ++d) {
    if (std::optional<Bytes> b = memory_budget_of_device(scenario.memory, d))
      budget.push_back(b->count());
  }
  j["budget"] = budget;
  if (bins) j["aggregate"] = utilisation_bins(run, *bins);
  return j;
}

std::string summary_table(const Scenario& scenario, const ScenarioRun& result) {
  std::vector<const ScheduleRun*> runs;
  for (const ScheduleRun& r : result.runs) runs.push_back(&r);
  // One column group per level, from the metric table; status leads the simulation group.
  std::string groups = "<th rowspan=\"2\">schedule</th>", headings;
  std::vector<std::vector<std::string>> cells(runs.size());
  for (MetricLevel level : {MetricLevel::Formula, MetricLevel::Table, MetricLevel::Simulation}) {
    MetricColumns columns = metric_columns(column_metrics(level), scenario, runs);
    const bool status = level == MetricLevel::Simulation;
    groups +=
        fmt::format("<th colspan=\"{}\">{}</th>", columns.headings.size() + (status ? 1 : 0),
                    level == MetricLevel::Table ? "table (no comm)" : metric_level_name(level));
    if (status) headings += "<th>status</th>";
    for (const std::string& h : columns.headings) headings += "<th>" + escape_html(h) + "</th>";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (status) {
        cells[i].push_back(fmt::format("<td class=\"{}\">{}</td>",
                                       runs[i]->simulation.status == RunStatus::Ok ? "ok" : "fail",
                                       run_status_name(runs[i]->simulation.status)));
      }
      for (const std::string& c : columns.rows[i])
        cells[i].push_back("<td>" + escape_html(c) + "</td>");
    }
  }
  std::string h = "<table class=\"summary\"><thead><tr>" + groups + "</tr><tr>" + headings +
                  "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    h += "<tr><td>" + escape_html(runs[i]->label) + "</td>";
    for (const std::string& c : cells[i]) h += c;
    h += "</tr>\n";
  }
  h += "</tbody></table>\n";
  for (const DetailTable& t : detail_tables(scenario, runs)) h += html_table(t.rows, "", t.title);
  Ranking ranking = rank_schedules(result);
  auto list = [](const std::vector<std::string>& labels) {
    std::vector<std::string> escaped;
    for (const std::string& l : labels) escaped.push_back(escape_html(l));
    return escaped.empty() ? std::string("-") : fmt::format("{}", fmt::join(escaped, " &lt; "));
  };
  h += "<p class=\"ranking\">ranking, best first: formula: " + list(ranking.formula) +
       "; table: " + list(ranking.table) + "; simulation: " + list(ranking.simulation) + "</p>\n";
  if (!ranking.changes.empty()) {
    h += "<ul class=\"changes\">\n";
    for (const RankingChange& c : ranking.changes) {
      h += fmt::format("<li>{} beats {} at the {} level but not at the {} level: {}</li>\n",
                       escape_html(c.better), escape_html(c.worse), escape_html(c.from_level),
                       escape_html(c.to_level), escape_html(c.reason));
    }
    h += "</ul>\n";
  } else if (result.runs.size() > 1) {
    h += "<p>the ranking of schedules is the same at every level</p>\n";
  }
  if (scenario.parallelism.enabled) {
    // The gradient sync tables of the text report (docs/parallelism.md).
    for (const SyncTable& t : sync_tables(result))
      if (!t.rows.rows.empty()) h += html_table(t.rows, "sync", t.title);
  }
  // Failures and skipped schedules are listed once, in the verdict above, with formatted numbers.
  return h;
}

/// A ranked time; with variability the mean, its standard deviation and 95th percentile.
std::string time_with_spread(const RankedSchedule& r) {
  std::string out = format_metric(MetricUnit::Seconds, r.time_s);
  if (r.sd_s && r.p95_s)
    out += fmt::format(" \u00b1 {} (p95 {})", format_metric(MetricUnit::Seconds, *r.sd_s),
                       format_metric(MetricUnit::Seconds, *r.p95_s));
  return out;
}

/// The verdict: schedules that ran, fastest first, with speed-up, bubble and peak memory against
/// the budget; failed ones below with their reason.
std::string verdict_table(const Scenario& scenario, const ScenarioRun& result,
                          const std::string& baseline) {
  const Verdict v = make_verdict(scenario, result, baseline);
  std::string h;
  if (!v.ranked.empty()) {
    const RankedSchedule& best = v.ranked.front();
    h += fmt::format("<p class=\"verdict\"><b>{}</b> is fastest: {} ({})",
                     escape_html(best.run->label), escape_html(time_with_spread(best)),
                     escape_html(v.by->name()));
    if (best.speedup_vs_baseline)
      h += fmt::format(", {:.2f}x {}", *best.speedup_vs_baseline, escape_html(v.baseline));
    h += ".</p>\n";
  }
  if (!v.baseline_note.empty()) h += "<p>" + escape_html(v.baseline_note) + "</p>\n";
  for (const std::string& note : v.notes) h += "<p class=\"note\">" + escape_html(note) + "</p>\n";
  std::vector<const MonteCarloResult*> sampled;
  for (const RankedSchedule& r : v.ranked)
    if (r.run->monte_carlo) sampled.push_back(&*r.run->monte_carlo);
  const std::optional<SampleAxis> axis = sample_axis(sampled);
  // A recipe's units (docs/recipes.md), where the scenario has them.
  const std::vector<RecipeColumn> recipe = recipe_columns(scenario, v);
  std::string recipe_heads;
  for (const RecipeColumn& c : recipe) recipe_heads += "<th>" + escape_html(c.heading) + "</th>";
  h += fmt::format(
      "<table class=\"summary verdict\"><thead><tr><th>rank</th><th>schedule</th><th>{}</th>"
      "<th>speed-up vs {}</th><th>bubble</th><th>peak memory of budget</th>{}{}</tr></thead>"
      "<tbody>\n",
      escape_html(v.by->name()), escape_html(v.baseline.empty() ? "-" : v.baseline), recipe_heads,
      axis ? fmt::format("<th>samples around the mean (\u00b1 {}; red: mean)</th>",
                         escape_html(format_metric(MetricUnit::Seconds, axis->half_width)))
           : std::string());
  for (std::size_t i = 0; i < v.ranked.size(); ++i) {
    const RankedSchedule& r = v.ranked[i];
    std::string recipe_cells;
    for (const RecipeColumn& c : recipe) recipe_cells += "<td>" + escape_html(c.cells[i]) + "</td>";
    const std::optional<double> mem = peak_memory_fraction(scenario, *r.run);
    h += fmt::format(
        "<tr "
        "data-rank=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4f}</td><td>{}</td>"
        "{}{}</tr>\n",
        r.rank, r.rank, escape_html(r.run->label),
        "<span style=\"white-space:nowrap\">" + escape_html(time_with_spread(r)) + "</span>",
        r.speedup_vs_baseline ? fmt::format("{:.2f}x", *r.speedup_vs_baseline) : "-",
        r.run->simulation.metrics.bubble_ratio,
        mem ? fmt::format("{:.0f}%", *mem * 100.0) : std::string("-"), recipe_cells,
        axis && r.run->monte_carlo ? "<td>" + distribution_svg(*r.run->monte_carlo, *axis) + "</td>"
                                   : std::string(axis ? "<td></td>" : ""));
  }
  h += "</tbody></table>\n";
  for (const std::string& w : v.warnings)
    h += "<p class=\"warning\">warning: " + escape_html(w) + "</p>\n";
  if (v.ranked.size() > 1 || (!v.ranked.empty() && scenario.parallelism.enabled)) {
    h += comparison_chart_html(
        comparison_rows(scenario, v),
        "the schedules side by side, fastest first: where each one's iteration goes, and its peak "
        "memory against the budget");
  }
  h += idle_split_html(v);
  for (const FailedSchedule& f : v.failed) {
    // The reason starts with what happened ("out of memory on device 0 ...", "infeasible: ...").
    h += fmt::format("<p class=\"fail\" data-status=\"{}\">{}: {}</p>\n", escape_html(f.status),
                     escape_html(f.label), escape_html(f.reason));
  }
  return h;
}

/// The derived per-stage costs every schedule of the report was generated and replayed with.
std::string stage_cost_table(const ScenarioRun& result) {
  const auto& stages = result.resolved.costs.stages;
  // With MoE (docs/moe.md): the routed experts' part of the static memory and of M_B.
  const bool experts = has_expert_memory(stages);
  std::string h =
      "<table class=\"summary costs\"><thead><tr><th>stage</th><th>T_F</th><th>T_B</th>"
      "<th>T_W</th><th>M_B</th><th>M_W</th><th>static</th><th>p2p</th>" +
      std::string(experts ? "<th>expert static</th><th>expert M_B</th>" : "") +
      "</tr></thead><tbody>\n";
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageCost& c = stages[s];
    auto t = [](Time x) { return escape_html(format_metric(MetricUnit::Seconds, x.seconds())); };
    auto b = [](Bytes x) { return escape_html(format_metric(MetricUnit::Bytes, x.as_double())); };
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}"
        "</td>{}</tr>\n",
        s, t(c.forward), t(c.backward_input), t(c.backward_weight), b(c.activation),
        b(c.weight_grad), b(c.static_memory), b(c.p2p),
        experts ? fmt::format("<td>{}</td><td>{}</td>", b(c.moe.expert_static),
                              b(c.moe.expert_activation))
                : std::string());
  }
  h += "</tbody></table>\n";
  for (const std::string& line : mtp_cost_notes(result.resolved))
    h += "<p>" + escape_html(line) + ".</p>\n";
  return h;
}

}  // namespace

std::string render_html_report(const Scenario& scenario, const ScenarioRun& result,
                               const std::vector<const MemoryTimeline*>& memory,
                               const std::string& baseline, std::size_t max_ops,
                               const std::vector<const CommLaneRecorder*>& lanes_recorded) {
  nlohmann::json data;
  data["scenario"] = scenario.labels.name;
  nlohmann::json runs = nlohmann::json::array();
  double span_us = 0.0, memory_max = 0.0;  // the shared time axis and memory scale
  std::vector<std::size_t> ran;
  for (const ScheduleRun& r : result.runs) ran.push_back(ops_that_ran(r));
  const std::vector<std::optional<std::size_t>> budgets = exact_op_budgets(ran, max_ops);
  std::string notes;   // what was aggregated, above the timelines
  bool moe = false;    // some run has MoE phases: the script draws their lanes
  bool tails = false;  // some run has an iteration tail: the script draws it
  bool lanes = false;  // some run has communication: the script draws its lanes
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    std::optional<TimelineBins> bins;
    if (budgets[i]) {
      bins = plan_timeline_bins(result.runs[i], *budgets[i]);
      notes += fmt::format("<p class=\"aggregated\">{}: {}</p>\n",
                           escape_html(result.runs[i].label), escape_html(aggregation_note(*bins)));
    }
    nlohmann::json run =
        run_data(scenario, result, result.runs[i], i < memory.size() ? memory[i] : nullptr,
                 i < lanes_recorded.size() ? lanes_recorded[i] : nullptr, bins);
    moe = moe || run.contains("phases") || run.contains("experts");
    tails = tails || run.contains("tails");
    lanes = lanes || run.contains("comm");
    span_us = std::max(span_us, run["makespan_us"].get<double>());
    for (const auto& series : run["memory"])
      for (const auto& sample : series) memory_max = std::max(memory_max, sample[2].get<double>());
    for (const auto& b : run["budget"]) memory_max = std::max(memory_max, b.get<double>());
    runs.push_back(std::move(run));
  }
  data["runs"] = runs;
  data["span_us"] = span_us;
  data["memory_max"] = memory_max;
  // GPU labels: the topology's vertex names where devices are placed on one.
  nlohmann::json names = nlohmann::json::array();
  const CommunicationSpec& comm = scenario.communication;
  if (comm.topology) {
    for (VertexId v : comm.placement) names.push_back(comm.topology->vertex_name(v));
  }
  data["device_names"] = names;
  // '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the
  // block.
  std::string json;
  for (char c : data.dump()) {
    if (c == '<')
      json += "\\u003c";
    else
      json += c;
  }
  std::string title = escape_html(fmt::format("bubblesim: {}", scenario.labels.name));
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title +
      "</title>\n"
      "<script>(function(){var n=0;function bump(){n++;document.documentElement.setAttribute("
      "'data-errors',String(n));}window.addEventListener('error',bump);var ce=console.error;"
      "console.error=function(){bump();return ce.apply(console,arguments);};})();</script>\n"
      "<style>" +
      std::string(html_asset_report_css()) + "</style>\n</head>\n<body>\n<h1>" + title + "</h1>\n" +
      fmt::format("<p>p={} stages, m={} microbatches; timelines show the simulation replay.</p>\n",
                  scenario.stages, scenario.microbatches) +
      "<h2>verdict</h2>\n" + verdict_table(scenario, result, baseline) + "<h2>summary</h2>\n" +
      summary_table(scenario, result) + "<details><summary>derived per-stage costs</summary>\n" +
      stage_cost_table(result) + "</details>\n" + html_topology_section(scenario, result) +
      "<svg id=\"svg-namespace\" width=\"0\" height=\"0\"></svg>\n"
      "<p class=\"controls\"><label><input type=\"checkbox\" id=\"fit-each\"> fit each timeline to "
      "its own makespan</label> (default: one time axis for all; wheel zooms a timeline, drag "
      "pans, "
      "double-click resets)</p>\n" +
      notes +
      "<div id=\"legend\" class=\"legend\"></div>\n<div id=\"runs\">"
      "</div>\n<script type=\"application/json\" id=\"bubblesim-data\">" +
      json + "</script>\n<script>" + script(moe, tails, lanes) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace bubblesim
