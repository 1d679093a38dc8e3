#include "sim/report/explain_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/report/json_report.h"
#include "sim/report/report_format.h"
#include "sim/report/text_table.h"
#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

using namespace report_format;

std::string factor(const std::optional<double>& f) {
  return f ? fmt::format("{:.2f}x", *f) : std::string("-");
}

Bytes worst(const std::vector<Bytes>& per_device) {
  Bytes out;
  for (Bytes b : per_device) out = std::max(out, b);
  return out;
}

bool finished(const ScheduleRun& r) { return r.simulation.status == RunStatus::Ok; }

std::string budget_summary(const Scenario& s) {
  const auto& b = s.memory.budget;
  if (b.empty()) return "no memory budget";
  if (b.size() == 1) return fmt::format("memory budget {} per device", b.front());
  std::vector<std::string> parts;
  for (Bytes x : b) parts.push_back(to_string(x));
  return fmt::format("memory budgets [{}]", fmt::join(parts, ", "));
}

std::string role(const ExplainedSchedule& r) {
  return r.subject ? "explained" : r.listed ? "listed" : "added";
}

/// Peak memory of the worst device: the simulation's when it finished, else the table level's
/// (no budget there: what the schedule would need).
Bytes row_peak(const ScheduleRun& r) {
  return finished(r) ? worst(r.simulation.metrics.memory.peak_memory_per_device)
                     : worst(r.ideal.metrics.memory.peak_memory_per_device);
}

/// "send-hold, host-gap; they refused the list-replay (send-hold) and the stream-replay
/// (send-hold)", or "none engaged: every shortcut of the replay open".
std::string behaviours_line(const ComponentUse& use) {
  if (use.engaged.empty()) return "none engaged: every shortcut of the replay open";
  std::string out = fmt::format("{} engaged", fmt::join(use.engaged, ", "));
  if (use.refused.empty()) return out + "; every shortcut of the replay open";
  std::vector<std::string> refused;
  for (const ComponentUse::Refusal& r : use.refused)
    refused.push_back(fmt::format("{} (by {})", r.path, r.by));
  return out + fmt::format("; shortcuts refused: {}", fmt::join(refused, ", "));
}

}  // namespace

std::string explain_report_text(const Scenario& scenario, const Generator& generator,
                                const ScheduleExplanation& e, std::size_t width) {
  const ScheduleRun& subject = e.subject().run;
  std::string out =
      fmt::format("{} at scenario {} ({}): p={} stages, m={} microbatches, communication: {}, {}\n",
                  visible_controls(e.name), visible_controls(scenario.labels.name),
                  visible_controls(scenario.labels.file), scenario.stages, scenario.microbatches,
                  communication_summary(scenario), budget_summary(scenario));
  out += fmt::format("{}: {}\n", visible_controls(generator.info.name),
                     visible_controls(generator.info.description));
  out += fmt::format("  entry: {} ({})\n", visible_controls(subject.label),
                     e.listed ? "from the scenario's schedules"
                              : "not listed in the scenario: the generator's defaults");
  out += fmt::format("  formula: {}\n", subject.has_formula || !subject.formula.note.empty()
                                            ? subject.formula.note
                                            : std::string("none published"));
  out += fmt::format("  engine behaviours: {}\n", behaviours_line(subject.simulation.components));

  // Memory decisions of the explained schedule, read from its replayed table.
  out += fmt::format(
      "\nmemory decisions of {} (O, L, R ops of the replayed table, backwards that recompute "
      "per unit; peaks at the simulation level):\n",
      visible_controls(subject.label));
  TextTable mem({"device", "offloaded (O)", "reloaded (L)", "recomputed (R)", "recomputing B",
                 "units in B", "unit held in B", "bytes offloaded", "bytes reloaded", "not stored",
                 "peak act", "peak mem", "budget", "headroom"});
  DeviceMemoryDecisions total;
  for (std::size_t d = 0; d < e.devices.size(); ++d) {
    const DeviceMemoryDecisions& x = e.devices[d];
    std::string headroom = "-";
    if (x.budget) {
      headroom = x.peak_memory <= *x.budget ? to_string(*x.budget - x.peak_memory)
                                            : "over by " + to_string(x.peak_memory - *x.budget);
    }
    mem.add_row({std::to_string(d), std::to_string(x.offloaded), std::to_string(x.reloaded),
                 std::to_string(x.recomputed), std::to_string(x.recomputed_in_backward),
                 std::to_string(x.recompute_units), to_string(x.recompute_unit),
                 to_string(x.offloaded_bytes), to_string(x.reloaded_bytes),
                 to_string(x.recompute_saved), to_string(x.peak_activation),
                 to_string(x.peak_memory), x.budget ? to_string(*x.budget) : "-", headroom});
    total.offloaded += x.offloaded;
    total.reloaded += x.reloaded;
    total.recomputed += x.recomputed;
    total.recomputed_in_backward += x.recomputed_in_backward;
    total.recompute_units += x.recompute_units;
    total.recompute_unit = std::max(total.recompute_unit, x.recompute_unit);
    total.offloaded_bytes += x.offloaded_bytes;
    total.reloaded_bytes += x.reloaded_bytes;
    total.recompute_saved += x.recompute_saved;
  }
  mem.add_row({"total", std::to_string(total.offloaded), std::to_string(total.reloaded),
               std::to_string(total.recomputed), std::to_string(total.recomputed_in_backward),
               std::to_string(total.recompute_units), to_string(total.recompute_unit),
               to_string(total.offloaded_bytes), to_string(total.reloaded_bytes),
               to_string(total.recompute_saved), "", "", "", ""});
  // Tables fold to the width; prose is broken to it at the end.
  out += mem.render(width);
  if (total.offloaded == 0 && total.reloaded == 0 && total.recomputed == 0 &&
      total.recomputed_in_backward == 0) {
    out +=
        "  nothing is offloaded, reloaded or recomputed: the memory is shaped by the order of the "
        "ops alone\n";
  }
  for (const PassDecision& p : subject.passes) out += fmt::format("  scenario's {}\n", p.summary());
  if (!finished(subject)) {
    out += fmt::format("  {} at the simulation level: {}\n",
                       run_status_name(subject.simulation.status), subject.simulation.failure);
  }

  // Comparison at the same scenario and budget.
  const double ref_table = subject.ideal.metrics.bubble_ratio_span;
  const double ref_sim = subject.simulation.metrics.bubble_ratio_span;
  out += fmt::format(
      "\ncomparison at the same scenario and {} (bubble(span) = 1 - busy / (p x largest device "
      "span); "
      "x {} = bubble(span) / {}'s at that level):\n",
      budget_summary(scenario), e.name, e.name);
  TextTable cmp({"schedule", "role", "table bubble(span)", "table bubble", "sim bubble(span)",
                 "sim bubble", "iteration ms", "peak mem (worst)", "out of memory",
                 fmt::format("x {} (table)", e.name), fmt::format("x {} (sim)", e.name)});
  for (const ExplainedSchedule& row : e.rows) {
    const ScheduleRun& r = row.run;
    const Metrics& t = r.ideal.metrics;
    const Metrics& s = r.simulation.metrics;
    const bool ok = finished(r);
    const bool oom = r.simulation.status == RunStatus::OutOfMemory;
    cmp.add_row(
        {r.label, role(row), ratio(t.bubble_ratio_span), ratio(t.bubble_ratio),
         ok ? ratio(s.bubble_ratio_span) : "-", ok ? ratio(s.bubble_ratio) : "-",
         ok ? ms(s.makespan) : "-",
         ok ? to_string(row_peak(r)) : to_string(row_peak(r)) + " (table)",
         oom  ? "YES"
         : ok ? "no"
              : std::string(run_status_name(r.simulation.status)),
         factor(bubble_factor(t.bubble_ratio_span, ref_table)),
         ok && finished(subject) ? factor(bubble_factor(s.bubble_ratio_span, ref_sim)) : "-"});
  }
  out += cmp.render(width);
  bool any_failed = false;
  for (const ExplainedSchedule& row : e.rows) {
    if (finished(row.run)) continue;
    if (!any_failed)
      out +=
          "\nnot finished at the simulation level (peak mem is then the table level's, "
          "unbudgeted):\n";
    any_failed = true;
    out += fmt::format("  {}: {}: {}\n", visible_controls(row.run.label),
                       run_status_name(row.run.simulation.status),
                       visible_controls(row.run.simulation.failure));
  }
  if (!e.skipped.empty()) out += "\n";
  for (const SkippedSchedule& s : e.skipped)
    out += fmt::format("skipped baseline {}: {}\n", visible_controls(s.schedule),
                       visible_controls(s.reason));
  // A table whose first column alone is wider than the width (a long schedule label) still
  // breaks its rows at spaces; user strings (names, paths) cannot drive a terminal.
  return fit_lines(visible_controls(out, true), width);
}

nlohmann::json explain_report_json(const Scenario& scenario, const Generator& generator,
                                   const ScheduleExplanation& e) {
  const ScheduleRun& subject = e.subject().run;
  nlohmann::json j;
  j["explain_schema_version"] = kExplainSchemaVersion;
  j["schedule"] = e.name;
  j["label"] = subject.label;
  j["listed"] = e.listed;
  j["description"] = generator.info.description;
  nlohmann::json budget = nullptr;
  if (!scenario.memory.budget.empty()) {
    budget = nlohmann::json::array();
    for (const DeviceMemoryDecisions& d : e.devices)
      budget.push_back(d.budget ? d.budget->count() : 0);
  }
  j["scenario"] = {{"name", scenario.labels.name},
                   {"file", scenario.labels.file},
                   {"stages", scenario.stages},
                   {"microbatches", scenario.microbatches},
                   {"communication", communication_summary(scenario)},
                   {"budget_bytes_per_device", budget}};
  if (subject.has_formula || !subject.formula.note.empty()) {
    j["formula"] = {
        {"note", subject.formula.note},
        {"bubble_ratio", optional_number(subject.formula.bubble_ratio)},
        {"peak_activation_units", optional_number(subject.formula.peak_activation_units)}};
  } else {
    j["formula"] = nullptr;
  }
  j["components"] = component_use_json(subject.simulation.components);
  j["status"] = run_status_name(subject.simulation.status);
  j["failure"] = subject.simulation.failure.empty() ? nlohmann::json(nullptr)
                                                    : nlohmann::json(subject.simulation.failure);

  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t d = 0; d < e.devices.size(); ++d) {
    const DeviceMemoryDecisions& x = e.devices[d];
    devices.push_back(
        {{"device", d},
         {"offloaded", x.offloaded},
         {"reloaded", x.reloaded},
         {"recomputed", x.recomputed},
         {"recomputed_in_backward", x.recomputed_in_backward},
         {"recompute_units", x.recompute_units},
         {"recompute_unit_bytes", x.recompute_unit.count()},
         {"offloaded_bytes", x.offloaded_bytes.count()},
         {"reloaded_bytes", x.reloaded_bytes.count()},
         {"recompute_not_stored_bytes", x.recompute_saved.count()},
         {"peak_activation_bytes", x.peak_activation.count()},
         {"peak_memory_bytes", x.peak_memory.count()},
         {"budget_bytes", x.budget ? nlohmann::json(x.budget->count()) : nlohmann::json(nullptr)}});
  }
  nlohmann::json passes = nlohmann::json::array();
  for (const PassDecision& p : subject.passes) {
    nlohmann::json bytes = nlohmann::json::array();
    for (Bytes b : p.bytes_per_device) bytes.push_back(b.count());
    passes.push_back({{"name", pass_name(p.kind)},
                      {"policy", memory_policy_name(p.policy)},
                      {"count_per_device", p.count_per_device},
                      {"bytes_per_device", bytes},
                      {"stages", p.stages},
                      {"candidates", p.candidates}});
    if (p.in_backward) {  // recompute inside the backward (docs/memory.md)
      passes.back()["in_backward"] = true;
      passes.back()["units_per_backward"] = p.units;
      passes.back()["unit_bytes"] = p.unit.count();
    }
  }
  j["memory_decisions"] = {{"devices", devices}, {"passes", passes}};

  const double ref_table = subject.ideal.metrics.bubble_ratio_span;
  const double ref_sim = subject.simulation.metrics.bubble_ratio_span;
  nlohmann::json rows = nlohmann::json::array();
  for (const ExplainedSchedule& row : e.rows) {
    const ScheduleRun& r = row.run;
    const Metrics& t = r.ideal.metrics;
    const Metrics& s = r.simulation.metrics;
    const bool ok = finished(r);
    nlohmann::json x;
    x["schedule"] = r.schedule;
    x["label"] = r.label;
    x["role"] = role(row);
    x["status"] = run_status_name(r.simulation.status);
    x["out_of_memory"] = r.simulation.status == RunStatus::OutOfMemory;
    x["table"] = {{"bubble_ratio_span", t.bubble_ratio_span},
                  {"bubble_ratio", t.bubble_ratio},
                  {"makespan_s", t.makespan.seconds()},
                  {"peak_memory_bytes", worst(t.memory.peak_memory_per_device).count()}};
    if (ok) {
      x["simulation"] = {{"bubble_ratio_span", s.bubble_ratio_span},
                         {"bubble_ratio", s.bubble_ratio},
                         {"makespan_s", s.makespan.seconds()},
                         {"peak_memory_bytes", worst(s.memory.peak_memory_per_device).count()}};
      x["iteration_time_s"] = s.makespan.seconds();
    } else {
      x["simulation"] = nullptr;
      x["iteration_time_s"] = nullptr;
    }
    x["bubble_vs_explained"] = {
        {"table", optional_number(bubble_factor(t.bubble_ratio_span, ref_table))},
        {"simulation", ok && finished(subject)
                           ? optional_number(bubble_factor(s.bubble_ratio_span, ref_sim))
                           : nlohmann::json(nullptr)}};
    rows.push_back(x);
  }
  j["comparison"] = rows;
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedSchedule& s : e.skipped)
    skipped.push_back({{"schedule", s.schedule}, {"reason", s.reason}});
  j["skipped"] = skipped;
  return j;
}

}  // namespace bubblesim
