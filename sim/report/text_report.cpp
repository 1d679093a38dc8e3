// The text report: the verdict first, then the level tables, then (run form) the details.
#include "sim/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine/metrics.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/metric_format.h"
#include "sim/report/ranking.h"
#include "sim/report/report_format.h"
#include "sim/report/report_rows.h"
#include "sim/report/sync_tables.h"
#include "sim/report/text_table.h"
#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

std::string render(const ReportRows& rows, std::size_t width, std::vector<std::size_t> left = {},
                   std::size_t leading = 1) {
  TextTable t(rows.header);
  t.repeat_leading(leading);
  for (std::size_t c : left) t.align_left(c);
  for (const auto& row : rows.rows) t.add_row(row);
  return t.render(width);
}

/// Quantities written in their units, words left-aligned; rows that differ only in a counted name
/// in `collapse_column` (when > 0) collapse into one.
std::string render(const std::vector<std::string>& headings,
                   const std::vector<std::vector<Cell>>& cells, std::size_t width,
                   std::size_t collapse_column = 0) {
  const SyncTable t = cell_table("", headings, cells, collapse_column);
  return render(t.rows, width, t.left);
}

std::string verdict_text(const Scenario& scenario, const Verdict& verdict, std::size_t width) {
  std::string out = wrap_text(verdict_headline(verdict), width);
  if (!verdict.ranked.empty()) out += "\n" + render(verdict_rows(scenario, verdict), width, {1}, 2);
  if (!verdict.baseline_note.empty()) out += wrap_text(verdict.baseline_note, width);
  for (const std::string& note : verdict.notes) out += wrap_text(note, width, 2);
  for (const std::string& w : verdict.warnings) out += wrap_text("warning: " + w, width, 2);
  if (const ReportRows idle = idle_split_rows(verdict); !idle.rows.empty())
    out += "\nidle time by cause, % of devices x makespan (docs/outputs.md):\n" +
           render(idle, width, {0});
  if (!verdict.failed.empty()) {
    out += fmt::format("\nfailed ({}):\n", verdict.failed.size());
    for (const FailedSchedule& f : verdict.failed)
      out += wrap_text(fmt::format("  {}: {}", f.label, f.reason), width, 4);
  }
  return out;
}

/// The formula, table and simulation tables; closed-form notes as footnotes below the formula.
std::string level_tables(const Scenario& scenario, const std::vector<const ScheduleRun*>& runs,
                         std::size_t width) {
  Footnotes notes;
  std::string out =
      render(level_rows(MetricLevel::Formula, "formula", scenario, runs, &notes), width, {3});
  out += notes.render(width) + "\n";
  out += render(level_rows(MetricLevel::Table, "table (no comm)", scenario, runs, nullptr), width) +
         "\n";
  out += render(level_rows(MetricLevel::Simulation, "simulation", scenario, runs, nullptr), width);
  for (const DetailTable& t : detail_tables(scenario, runs)) {
    out += '\n';
    out += render(t.rows, width);
  }
  return out;
}

std::string sync_text(const ScenarioRun& result, std::size_t width) {
  std::string out;
  for (const SyncTable& t : sync_tables(result))
    out.append("\n").append(render(t.rows, width, t.left));
  // How the flows were solved: by class or one by one (docs/engine.md, "Symmetric flows").
  for (const ScheduleRun& r : result.runs) {
    const FlowSymmetry& f = r.simulation.metrics.comm.symmetry;
    if (f.mode.empty()) continue;
    std::string solved;
    if (f.mode == "symmetric") {
      solved = fmt::format("; {} flows solved as {} (classes: {} of {} flows laid out)",
                           f.flows_started, f.classes_started, f.flow_classes, f.flows_laid_out);
    }
    out +=
        wrap_text(fmt::format("{}: flows {}: {}{}", r.label, f.mode, f.reason, solved), width, 2);
  }
  return out;
}

bool has_memory_section(const Scenario& scenario, const ScenarioRun& result) {
  bool memory = !scenario.memory.budget.empty();
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.simulation.metrics;
    memory = memory || m.offload.offloaded_bytes > Bytes::zero() ||
             m.recompute_time > Time::zero() || m.offload.exposed_offload > Time::zero();
  }
  return memory;
}

/// Per schedule and device; columns that are zero on every row are left out and named below,
/// devices whose rows do not differ collapse ("0-7").
std::string memory_text(const ScenarioRun& result, std::size_t width) {
  std::vector<std::string> headings{"memory",   "device",          "peak mem",
                                    "peak act", "offloaded",       "D2H busy",
                                    "H2D busy", "exposed offload", "recompute"};
  // With MoE (docs/moe.md): the routed experts' weights, gradients and optimizer state on the
  // device under EP, and what their MLPs keep per microbatch, summed over the stages it holds.
  const bool experts = std::any_of(result.runs.begin(), result.runs.end(),
                                   [](const auto& r) { return has_expert_memory(r.stage_costs); });
  if (experts) headings.insert(headings.end(), {"expert static", "expert act/mb"});
  std::vector<std::vector<Cell>> rows;
  std::vector<bool> nonzero(headings.size(), false);
  nonzero[0] = nonzero[1] = nonzero[2] = nonzero[3] = true;
  auto percent = [](Time busy, Time span) {
    return Cell::text(span > Time::zero() ? fmt::format("{:.1f}%", 100.0 * (busy / span)) : "-");
  };
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.simulation.metrics;
    const auto held = r.table.placement.stages_by_device(r.table.devices);
    for (std::size_t d = 0; d < m.memory.peak_memory_per_device.size(); ++d) {
      Time recompute;
      const auto& ops = r.table.device_ops[d];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpTiming& t = r.simulation.timings[d][i];
        if (ops[i].kind == OpKind::Recompute && t.end >= t.start && t.start >= Time::zero())
          recompute += t.end - t.start;
      }
      if (d < held.size())
        recompute += backward_recompute_time(r.stage_costs, r.table.microbatches, held[d]);
      const std::vector<bool> used{true,
                                   true,
                                   true,
                                   true,
                                   m.offload.offloaded_bytes_per_device[d] > Bytes::zero(),
                                   m.offload.d2h_busy_per_device[d] > Time::zero(),
                                   m.offload.h2d_busy_per_device[d] > Time::zero(),
                                   m.offload.exposed_offload_per_device[d] > Time::zero(),
                                   recompute > Time::zero()};
      for (std::size_t c = 0; c < used.size(); ++c) nonzero[c] = nonzero[c] || used[c];
      rows.push_back({Cell::text(r.label), Cell::text(std::to_string(d)),
                      Cell::bytes(m.memory.peak_memory_per_device[d]),
                      Cell::bytes(m.memory.peak_activation_per_device[d]),
                      Cell::bytes(m.offload.offloaded_bytes_per_device[d]),
                      percent(m.offload.d2h_busy_per_device[d], m.makespan),
                      percent(m.offload.h2d_busy_per_device[d], m.makespan),
                      Cell::seconds(m.offload.exposed_offload_per_device[d]),
                      Cell::seconds(recompute)});
      if (experts) {
        Bytes weights, kept;
        for (std::int32_t s : d < held.size() ? held[d] : std::vector<std::int32_t>{}) {
          if (static_cast<std::size_t>(s) >= r.stage_costs.size()) continue;
          weights += r.stage_costs[static_cast<std::size_t>(s)].moe.expert_static;
          kept += r.stage_costs[static_cast<std::size_t>(s)].moe.expert_activation;
        }
        rows.back().push_back(Cell::bytes(weights));
        rows.back().push_back(Cell::bytes(kept));
        nonzero[nonzero.size() - 2] = nonzero[nonzero.size() - 1] = true;
      }
    }
  }
  std::vector<std::string> kept_headings, zero;
  std::vector<std::vector<Cell>> kept(rows.size());
  for (std::size_t c = 0; c < headings.size(); ++c) {
    if (!nonzero[c]) {
      zero.push_back(headings[c]);
      continue;
    }
    kept_headings.push_back(headings[c]);
    for (std::size_t r = 0; r < rows.size(); ++r) kept[r].push_back(rows[r][c]);
  }
  CellText text = write_cells(kept_headings, kept);
  std::vector<std::vector<std::string>> collapsed = collapse_numbered_rows(text.rows, 1);
  for (std::size_t r = collapsed.size(); r-- > 1;)  // the label once per schedule
    if (collapsed[r][0] == collapsed[r - 1][0]) collapsed[r][0].clear();
  std::string out = "\n" + render(ReportRows{text.headings, collapsed}, width);
  if (!zero.empty())
    out += wrap_text(fmt::format("zero for every device: {}", fmt::join(zero, ", ")), width);
  return out;
}

std::string ranking_changes_text(const ScenarioRun& result, std::size_t width) {
  Ranking ranking = rank_schedules(result);
  if (ranking.changes.empty())
    return result.runs.size() > 1 ? "\nthe ranking of schedules is the same at every level\n" : "";
  std::string out = "\nranking changes between levels:\n";
  for (const RankingChange& c : ranking.changes) {
    out += wrap_text(fmt::format("  {} beats {} at the {} level but not at the {} level: {}",
                                 c.better, c.worse, c.from_level, c.to_level, c.reason),
                     width, 4);
  }
  return out;
}

}  // namespace

std::string faults_text(const Scenario& scenario, const ScenarioRun& result, std::size_t width) {
  std::string out = "faults (simulation level only):\n";
  for (std::size_t d = 0; d < scenario.faults.slowdown.size(); ++d) {
    if (scenario.faults.slowdown[d] != 1.0) {
      out += fmt::format("  device {}: compute {}x slower (straggler)\n", d,
                         scenario.faults.slowdown[d]);
    }
  }
  for (const LinkFaultSpec& l : scenario.faults.links) {
    out += wrap_text(
        fmt::format("  link {} <-> {} from {}: {}", l.a, l.b, l.at,
                    l.bandwidth ? fmt::format("degraded to {}", *l.bandwidth) : std::string("cut")),
        width, 4);
  }
  std::vector<std::vector<Cell>> rows;
  for (const ScheduleRun& r : result.runs) {
    if (!r.fault_free) continue;
    const Time with = r.simulation.metrics.makespan, without = r.fault_free->metrics.makespan;
    const bool ok = r.simulation.status == RunStatus::Ok;
    rows.push_back({Cell::text(r.label),
                    Cell::text(std::string(run_status_name(r.simulation.status))),
                    ok ? Cell::seconds(with) : Cell::text("-"), Cell::seconds(without),
                    Cell::text(ok && without > Time::zero()
                                   ? fmt::format("{:+.2f}%", 100.0 * (with / without - 1.0))
                                   : std::string("-"))});
  }
  return out + render({"effect of faults", "status", "makespan", "without faults", "change"}, rows,
                      width);
}

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result,
                                 const ReportOptions& options) {
  const std::size_t width = options.width;
  const Verdict verdict = make_verdict(scenario, result, options.baseline);
  std::string out =
      wrap_text(fmt::format("scenario {}: p={} stages, m={} microbatches, "
                            "communication: {}",
                            visible_controls(scenario.labels.name), scenario.stages,
                            scenario.microbatches, report_format::communication_summary(scenario)),
                width) +
      "\n";
  out += verdict_text(scenario, verdict, width) + "\n";
  out += level_tables(scenario, runs_in_order(result, verdict, options.compare), width);
  if (!options.compare) {
    // Costs derived from `model:` are not in the scenario: show what every schedule ran with.
    if (result.resolved.model_costs) {
      out += "\nper-GPU stage costs derived from the model:\n" +
             render(stage_cost_rows(result.resolved), width);
      for (const std::string& line : mtp_cost_notes(result.resolved))
        out += wrap_text(line, width, 2);
    }
    if (scenario.parallelism.enabled) out += sync_text(result, width);
    const bool memory = has_memory_section(scenario, result);
    if (memory) out += memory_text(result, width);
    for (const ScheduleRun& r : result.runs) {
      for (const PassDecision& p : r.passes) {
        if (memory || !p.is_memory_pass())
          out += wrap_text(fmt::format("{}: {}", r.label, p.summary()), width, 2);
      }
    }
    if (scenario.faults.any()) out += "\n" + faults_text(scenario, result, width);
    // A deadlock's full description (the blocked ops); the verdict has its first line.
    for (const ScheduleRun& r : result.runs) {
      if (r.simulation.status == RunStatus::Deadlock)
        out += "\n" + wrap_text(fmt::format("{}: {}", r.label, r.simulation.failure), width, 2);
    }
  }
  // User strings (the name, labels, file and vertex names in messages) reach the terminal: no
  // control character of theirs (ESC, BEL, CR) may drive it or forge a line of the report.
  return visible_controls(out + ranking_changes_text(result, width), true);
}

}  // namespace bubblesim
