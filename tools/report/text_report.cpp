#include "tools/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>

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

std::string scenario_report_text(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = fmt::format(
      "scenario {}: p={} stages, m={} microbatches, communication: {}\n\n", scenario.name,
      scenario.stages, scenario.microbatches, communication_summary(scenario));

  TextTable formula({"formula", "bubble ratio", "peak act (units)", "closed form"});
  for (const ScheduleRun& r : result.runs) {
    formula.add_row(
        {r.label, opt_ratio(r.formula.bubble_ratio),
         r.formula.peak_activation_units ? units(*r.formula.peak_activation_units) : "-",
         r.has_formula            ? r.formula.note
         : r.formula.note.empty() ? "none published"
                                  : "none published (note below)"});
  }
  out += formula.render() + "\n";
  // Generators without a closed form may still explain their result (the optimizer: method, gap,
  // bound, what it offloaded and recomputed).
  for (const ScheduleRun& r : result.runs) {
    if (!r.has_formula && !r.formula.note.empty())
      out += fmt::format("{}: {}\n\n", r.label, r.formula.note);
  }

  TextTable table(
      {"table (no comm)", "makespan ms", "span ms", "bubble", "bubble(span)", "peak act (units)"});
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.ideal.metrics;
    table.add_row({r.label, ms(m.makespan), ms(m.stage_span_max), ratio(m.bubble_ratio),
                   ratio(m.bubble_ratio_span), units(m.peak_activation_units)});
  }
  out += table.render() + "\n";

  TextTable sim({"simulation", "status", "makespan ms", "span ms", "bubble", "bubble(span)",
                 "peak act (units)", "peak mem", "exposed comm ms"});
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.simulation.metrics;
    Bytes peak_mem;
    for (Bytes b : m.peak_memory_per_device) peak_mem = std::max(peak_mem, b);
    sim.add_row({r.label, std::string(run_status_name(r.simulation.status)), ms(m.makespan),
                 ms(m.stage_span_max), ratio(m.bubble_ratio), ratio(m.bubble_ratio_span),
                 units(m.peak_activation_units), to_string(peak_mem), ms(m.exposed_comm)});
  }
  out += sim.render();

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
  std::vector<std::vector<std::string>> rows;
  for (const ScheduleRun& r : result.runs) {
    rows.push_back({r.label, opt_ratio(r.formula.bubble_ratio),
                    r.formula.peak_activation_units ? units(*r.formula.peak_activation_units) : "-",
                    r.has_formula ? r.formula.note : "none published"});
  }
  out += "### Formula\n\n" +
         md_table({"schedule", "bubble ratio", "peak act (units)", "closed form"}, rows) + "\n";
  std::string notes;  // generators without a closed form but with a note (the optimizer)
  for (const ScheduleRun& r : result.runs) {
    if (!r.has_formula && !r.formula.note.empty())
      notes += fmt::format("- {}: {}\n", r.label, r.formula.note);
  }
  if (!notes.empty()) out += notes + "\n";
  rows.clear();
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.ideal.metrics;
    rows.push_back({r.label, ms(m.makespan), ms(m.stage_span_max), ratio(m.bubble_ratio),
                    ratio(m.bubble_ratio_span), units(m.peak_activation_units)});
  }
  out +=
      "### Table (scenario costs, no communication)\n\n" +
      md_table({"schedule", "makespan ms", "span ms", "bubble", "bubble(span)", "peak act (units)"},
               rows) +
      "\n";
  rows.clear();
  for (const ScheduleRun& r : result.runs) {
    const Metrics& m = r.simulation.metrics;
    Bytes peak_mem;
    for (Bytes b : m.peak_memory_per_device) peak_mem = std::max(peak_mem, b);
    rows.push_back({r.label, std::string(run_status_name(r.simulation.status)), ms(m.makespan),
                    ms(m.stage_span_max), ratio(m.bubble_ratio), ratio(m.bubble_ratio_span),
                    units(m.peak_activation_units), to_string(peak_mem), ms(m.exposed_comm)});
  }
  out += "### Simulation\n\n" +
         md_table({"schedule", "status", "makespan ms", "span ms", "bubble", "bubble(span)",
                   "peak act (units)", "peak mem", "exposed comm ms"},
                  rows);
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

std::string csv_report_header() {
  return "scenario,schedule,label,status,formula_bubble_ratio,formula_peak_activation_units,table_"
         "makespan_s,"
         "table_bubble_ratio,makespan_s,stage_span_max_s,bubble_ratio,bubble_ratio_span,peak_"
         "activation_bytes,"
         "peak_activation_units,exposed_comm_s,recompute_s\n";
}

std::string csv_report_row(const Scenario& scenario, const ScheduleRun& r) {
  auto opt = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.17g}", *v) : std::string();
  };
  const Metrics& t = r.ideal.metrics;
  const Metrics& m = r.simulation.metrics;
  return fmt::format(
      "{},{},{},{},{},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{},{:.17g},{:.17g},{:.17g}"
      "\n",
      csv_quote(scenario.name), csv_quote(r.schedule), csv_quote(r.label),
      run_status_name(r.simulation.status), opt(r.formula.bubble_ratio),
      opt(r.formula.peak_activation_units), t.makespan.seconds(), t.bubble_ratio,
      m.makespan.seconds(), m.stage_span_max.seconds(), m.bubble_ratio, m.bubble_ratio_span,
      m.peak_activation.count(), m.peak_activation_units, m.exposed_comm.seconds(),
      m.recompute_time.seconds());
}

std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = csv_report_header();
  for (const ScheduleRun& r : result.runs) out += csv_report_row(scenario, r);
  return out;
}

}  // namespace bubblesim
