#include "tools/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "tools/report/metric_format.h"
#include "tools/report/ranking.h"
#include "tools/report/report_format.h"
#include "tools/report/text_table.h"

namespace bubblesim {
using namespace report_format;

std::string faults_text(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = "faults (simulation level only):\n";
  for (std::size_t d = 0; d < scenario.faults.slowdown.size(); ++d) {
    if (scenario.faults.slowdown[d] != 1.0) {
      out += fmt::format("  device {}: compute {}x slower (straggler)\n", d,
                         scenario.faults.slowdown[d]);
    }
  }
  for (const LinkFaultSpec& l : scenario.faults.links) {
    out +=
        fmt::format("  link {} <-> {} from {}: {}\n", l.a, l.b, l.at,
                    l.bandwidth ? fmt::format("degraded to {}", *l.bandwidth) : std::string("cut"));
  }
  TextTable effect({"effect of faults", "status", "makespan ms", "without faults ms", "change"});
  for (const ScheduleRun& r : result.runs) {
    if (!r.fault_free) continue;
    const Time with = r.simulation.metrics.makespan, without = r.fault_free->metrics.makespan;
    const bool ok = r.simulation.status == RunStatus::Ok;
    effect.add_row({r.label, std::string(run_status_name(r.simulation.status)), ok ? ms(with) : "-",
                    ms(without),
                    ok && without > Time::zero()
                        ? fmt::format("{:+.2f}%", 100.0 * (with / without - 1.0))
                        : std::string("-")});
  }
  return out + effect.render();
}

namespace {

std::vector<const ScheduleRun*> runs_of(const ScenarioRun& result) {
  std::vector<const ScheduleRun*> out;
  for (const ScheduleRun& r : result.runs) out.push_back(&r);
  return out;
}

/// One level's metric table: the schedule label, `lead` columns (status), the level's metrics
/// from the metric table, `trail` columns (the closed-form note).
struct LevelRows {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
LevelRows level_rows(
    MetricLevel level, const std::string& title, const Scenario& scenario,
    const ScenarioRun& result, const std::vector<std::string>& lead_headings = {},
    const std::function<std::vector<std::string>(const ScheduleRun&)>& lead = {},
    const std::vector<std::string>& trail_headings = {},
    const std::function<std::vector<std::string>(const ScheduleRun&)>& trail = {}) {
  MetricColumns columns = metric_columns(column_metrics(level), scenario, runs_of(result));
  LevelRows out;
  out.header.push_back(title);
  out.header.insert(out.header.end(), lead_headings.begin(), lead_headings.end());
  out.header.insert(out.header.end(), columns.headings.begin(), columns.headings.end());
  out.header.insert(out.header.end(), trail_headings.begin(), trail_headings.end());
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const ScheduleRun& r = result.runs[i];
    std::vector<std::string> row{r.label};
    if (lead) {
      auto cells = lead(r);
      row.insert(row.end(), cells.begin(), cells.end());
    }
    row.insert(row.end(), columns.rows[i].begin(), columns.rows[i].end());
    if (trail) {
      auto cells = trail(r);
      row.insert(row.end(), cells.begin(), cells.end());
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> status_cell(const ScheduleRun& r) {
  return {std::string(run_status_name(r.simulation.status))};
}

LevelRows formula_rows(const Scenario& scenario, const ScenarioRun& result,
                       const std::string& title, bool notes_below) {
  return level_rows(MetricLevel::Formula, title, scenario, result, {}, {}, {"closed form"},
                    [notes_below](const ScheduleRun& r) {
                      return std::vector<std::string>{r.has_formula            ? r.formula.note
                                                      : r.formula.note.empty() ? "none published"
                                                      : notes_below ? "none published (note below)"
                                                                    : "none published"};
                    });
}

std::string render_text(const LevelRows& rows) {
  TextTable t(rows.header);
  for (const auto& row : rows.rows) t.add_row(row);
  return t.render();
}

}  // namespace

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = fmt::format(
      "scenario {}: p={} stages, m={} microbatches, communication: {}\n\n", scenario.name,
      scenario.stages, scenario.microbatches, communication_summary(scenario));

  out += render_text(formula_rows(scenario, result, "formula", true)) + "\n";
  // Generators without a closed form may still explain their result (the optimizer: method, gap,
  // bound, what it offloaded and recomputed).
  for (const ScheduleRun& r : result.runs) {
    if (!r.has_formula && !r.formula.note.empty())
      out += fmt::format("{}: {}\n\n", r.label, r.formula.note);
  }
  out += render_text(level_rows(MetricLevel::Table, "table (no comm)", scenario, result)) + "\n";
  out += render_text(
      level_rows(MetricLevel::Simulation, "simulation", scenario, result, {"status"}, status_cell));

  // Gradient sync, optimizer and TP (docs/parallelism.md): shown when the scenario has parallelism.
  if (scenario.parallelism.enabled) {
    TextTable sync(
        {"sync", "dp sync ms", "exposed dp ms", "replica sync ms", "optimizer ms", "tp comm ms"});
    TextTable coll({"collective", "schedule", "algorithm", "ranks", "count", "bytes",
                    "simulated ms", "closed form ms"});
    TextTable links({"link class", "schedule", "busy ms", "bytes"});
    for (const ScheduleRun& r : result.runs) {
      const SyncMetrics& y = r.simulation.metrics.sync;
      sync.add_row({r.label, ms(y.dp_sync), ms(y.exposed_dp_sync), ms(y.replica_sync),
                    ms(y.optimizer), ms(y.tp_comm)});
      for (const CollectiveSummary& c : y.collectives) {
        coll.add_row({c.name, r.label, c.algorithm, std::to_string(c.ranks),
                      std::to_string(c.count), to_string(c.bytes), ms(c.simulated),
                      ms(c.closed_form)});
      }
      for (const LinkClassUsage& c : y.link_classes)
        links.add_row({c.name, r.label, ms(c.busy), to_string(c.bytes)});
    }
    out += "\n" + sync.render() + "\n" + coll.render() + "\n" + links.render();
  }

  // Memory: shown when any schedule offloaded, recomputed or waited for a reload, or with a budget.
  bool memory = !scenario.memory.budget.empty();
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.simulation.metrics;
    memory = memory || m.offloaded_bytes > Bytes::zero() || m.recompute_time > Time::zero() ||
             m.exposed_offload > Time::zero();
  }
  if (memory) {
    TextTable mem({"memory", "device", "peak mem", "at ms", "peak act", "offloaded", "D2H busy",
                   "H2D busy", "exposed offload ms", "recompute ms"});
    for (const ScheduleRun& r : result.runs) {
      const Metrics& m = r.simulation.metrics;
      const double span = m.makespan.seconds();
      auto util = [&](Time t) {
        return span > 0 ? fmt::format("{:.1f}%", 100.0 * t.seconds() / span) : std::string("-");
      };
      for (std::size_t d = 0; d < m.peak_memory_per_device.size(); ++d) {
        Time rec;
        const auto& ops = r.table.device_ops[d];
        for (std::size_t i = 0; i < ops.size(); ++i) {
          const OpTiming& t = r.simulation.timings[d][i];
          if (ops[i].kind == OpKind::Recompute && t.end >= t.start && t.start >= Time::zero())
            rec += t.end - t.start;
        }
        mem.add_row({d == 0 ? r.label : "", std::to_string(d),
                     to_string(m.peak_memory_per_device[d]), ms(m.peak_memory_time_per_device[d]),
                     to_string(m.peak_activation_per_device[d]),
                     to_string(m.offloaded_bytes_per_device[d]), util(m.d2h_busy_per_device[d]),
                     util(m.h2d_busy_per_device[d]), ms(m.exposed_offload_per_device[d]), ms(rec)});
      }
    }
    out += "\n" + mem.render();
    for (const ScheduleRun& r : result.runs) {
      for (const PassDecision& p : r.passes) out += fmt::format("{}: {}\n", r.label, p.summary());
    }
  }

  if (scenario.faults.any()) out += "\n" + faults_text(scenario, result);
  for (const ScheduleRun& r : result.runs) {
    if (!r.simulation.failure.empty())
      out += fmt::format("\n{}: {}\n", r.label, r.simulation.failure);
  }
  for (const SkippedSchedule& s : result.skipped)
    out += fmt::format("\nskipped {}: {}\n", s.schedule, s.reason);

  Ranking ranking = rank_schedules(result);
  if (!ranking.changes.empty()) {
    out += "\nranking changes between levels:\n";
    for (const RankingChange& c : ranking.changes) {
      out += fmt::format("  {} beats {} at the {} level but not at the {} level: {}\n", c.better,
                         c.worse, c.from_level, c.to_level, c.reason);
    }
  } else if (result.runs.size() > 1) {
    out += "\nthe ranking of schedules is the same at every level\n";
  }
  return out;
}

namespace {

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  std::string out = "|";
  std::string rule = "|";
  for (std::size_t i = 0; i < header.size(); ++i) {
    out += " " + md_cell(header[i]) + " |";
    rule += i == 0 ? "---|" : "---:|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const std::string& c : row) out += " " + md_cell(c) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = fmt::format(
      "## bubblesim: {}\n\np = {} stages, m = {} microbatches, communication: {}\n\n",
      scenario.name, scenario.stages, scenario.microbatches, communication_summary(scenario));
  LevelRows formula = formula_rows(scenario, result, "schedule", false);
  out += "### Formula\n\n" + md_table(formula.header, formula.rows) + "\n";
  std::string notes;  // generators without a closed form but with a note (the optimizer)
  for (const ScheduleRun& r : result.runs) {
    if (!r.has_formula && !r.formula.note.empty())
      notes += fmt::format("- {}: {}\n", r.label, r.formula.note);
  }
  if (!notes.empty()) out += notes + "\n";
  LevelRows table = level_rows(MetricLevel::Table, "schedule", scenario, result);
  out += "### Table (scenario costs, no communication)\n\n" + md_table(table.header, table.rows) +
         "\n";
  LevelRows sim =
      level_rows(MetricLevel::Simulation, "schedule", scenario, result, {"status"}, status_cell);
  out += "### Simulation\n\n" + md_table(sim.header, sim.rows);
  for (const ScheduleRun& r : result.runs) {
    if (!r.simulation.failure.empty())
      out +=
          fmt::format("\n- **{}** failed: {}\n", md_cell(r.label), md_cell(r.simulation.failure));
  }
  for (const SkippedSchedule& s : result.skipped)
    out += fmt::format("\n- skipped {}: {}\n", s.schedule, md_cell(s.reason));
  Ranking ranking = rank_schedules(result);
  if (!ranking.changes.empty()) {
    out += "\n### Ranking changes between levels\n\n";
    for (const RankingChange& c : ranking.changes) {
      out += fmt::format("- {} beats {} at the {} level but not at the {} level: {}\n", c.better,
                         c.worse, c.from_level, c.to_level, c.reason);
    }
  } else if (result.runs.size() > 1) {
    out += "\nThe ranking of schedules is the same at every level.\n";
  }
  return out;
}

std::string csv_quote(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

namespace {

/// The metrics that are CSV columns: every scalar one, in table order.
std::vector<const Metric*> csv_metrics() {
  std::vector<const Metric*> out;
  for (const Metric& m : metric_table())
    if (m.shape == MetricShape::Scalar) out.push_back(&m);
  return out;
}

std::string csv_number(const Metric& m, double v) {
  if (m.unit == MetricUnit::Bytes || m.unit == MetricUnit::Count) return fmt::format("{:.0f}", v);
  return fmt::format("{:.17g}", v);
}

}  // namespace

std::string csv_report_header() {
  std::string out = "scenario,schedule,label,status";
  for (const Metric* m : csv_metrics()) out += "," + m->csv_column();
  return out + "\n";
}

std::string csv_report_row(const Scenario& scenario, const ScheduleRun& r) {
  std::string out = fmt::format("{},{},{},{}", csv_quote(scenario.name), csv_quote(r.schedule),
                                csv_quote(r.label), run_status_name(r.simulation.status));
  for (const Metric* m : csv_metrics()) {
    MetricValue v = metric_value(*m, scenario, r);
    out += "," + (v.number ? csv_number(*m, *v.number) : std::string());
  }
  return out + "\n";
}

std::string csv_report_cells_without_run(std::string_view status) {
  return fmt::format(",,,{}{}", status, std::string(csv_metrics().size(), ','));
}

std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = csv_report_header();
  for (const ScheduleRun& r : result.runs) out += csv_report_row(scenario, r);
  return out;
}

}  // namespace bubblesim
