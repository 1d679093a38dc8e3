#include "sim/report/report_rows.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine/component_kind.h"
#include "sim/report/metric_format.h"
#include "sim/report/text_table.h"

namespace bubblesim {

std::vector<RecipeColumn> recipe_columns(const Scenario& scenario, const Verdict& verdict) {
  static const struct {
    const char* metric;
    const char* heading;
    const char* format;
    double scale;
  } kColumns[] = {{"simulation.tokens_per_s_per_gpu", "tokens/s/GPU", "{:.0f}", 1.0},
                  {"simulation.model_tflops_per_gpu", "TFLOP/s/GPU", "{:.1f}", 1.0},
                  {"simulation.mfu", "MFU", "{:.1f}%", 100.0},
                  {"simulation.gpu_hours_per_trillion_tokens", "GPU-h/Ttok", "{:.0f}", 1.0}};
  std::vector<RecipeColumn> out;
  for (const auto& c : kColumns) {
    RecipeColumn column{c.heading, {}};
    bool any = false;
    for (const RankedSchedule& r : verdict.ranked) {
      const std::optional<double> v = metric_value(*find_metric(c.metric), scenario, *r.run).number;
      any = any || v.has_value();
      column.cells.push_back(v ? fmt::format(fmt::runtime(c.format), *v * c.scale) : "-");
    }
    if (any) out.push_back(std::move(column));
  }
  return out;
}

namespace {

/// The recipe's units after the verdict's columns, where the scenario has them.
void append_recipe_columns(const Scenario& scenario, const Verdict& verdict,
                           std::vector<std::string>& headings,
                           std::vector<std::vector<Cell>>& rows) {
  for (const RecipeColumn& c : recipe_columns(scenario, verdict)) {
    headings.push_back(c.heading);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].push_back(Cell::text(c.cells[i]));
  }
}

}  // namespace

ReportRows verdict_rows(const Scenario& scenario, const Verdict& verdict) {
  const Metric& bubble = *find_metric("simulation.bubble_ratio");
  const Metric& peak = *find_metric("simulation.peak_memory_bytes");
  std::vector<std::string> headings{
      "rank",
      "schedule",
      std::string(verdict.by->column.empty() ? verdict.by->key : verdict.by->column),
      verdict.baseline.empty() ? "speed-up" : "speed-up vs " + verdict.baseline,
      std::string(bubble.column),
      std::string(peak.column),
      "of budget"};
  // With variability the time is a mean over samples: its spread follows it.
  bool sampled = false;
  for (const RankedSchedule& r : verdict.ranked) sampled = sampled || r.sd_s.has_value();
  if (sampled) {
    const std::string sd = "sd", p95 = "p95";
    headings.insert(headings.begin() + 3, p95);
    headings.insert(headings.begin() + 3, sd);
  }
  std::vector<std::vector<Cell>> rows;
  for (const RankedSchedule& r : verdict.ranked) {
    std::optional<double> fraction = peak_memory_fraction(scenario, *r.run);
    std::vector<Cell> row{
        Cell::text(std::to_string(r.rank)),
        Cell::text(r.run->label),
        Cell::seconds(r.time_s),
        Cell::text(r.speedup_vs_baseline ? fmt::format("{:.2f}x", *r.speedup_vs_baseline) : "-"),
        Cell::of(bubble.unit, metric_value(bubble, scenario, *r.run).number.value_or(0.0)),
        Cell::of(peak.unit, metric_value(peak, scenario, *r.run).number.value_or(0.0)),
        Cell::text(fraction ? fmt::format("{:.0f}%", 100.0 * *fraction) : "-")};
    if (sampled)
      row.insert(row.begin() + 3,
                 {Cell::seconds(r.sd_s.value_or(0.0)), Cell::seconds(r.p95_s.value_or(r.time_s))});
    rows.push_back(std::move(row));
  }
  append_recipe_columns(scenario, verdict, headings, rows);
  CellText text = write_cells(headings, rows);
  return ReportRows{text.headings, text.rows};
}

std::string verdict_headline(const Verdict& verdict) {
  if (verdict.ranked.empty()) return "No schedule ran without failing.";
  const RankedSchedule& best = verdict.ranked.front();
  std::string what = fmt::format("{} simulated {}", format_metric(MetricUnit::Seconds, best.time_s),
                                 verdict.by->column.empty() ? verdict.by->key : verdict.by->column);
  if (best.sd_s && best.p95_s)
    what += fmt::format(" (mean over samples; sd {}, p95 {})",
                        format_metric(MetricUnit::Seconds, *best.sd_s),
                        format_metric(MetricUnit::Seconds, *best.p95_s));
  std::string out = fmt::format("{} is fastest: {}", best.run->label, what);
  if (best.speedup_vs_baseline && best.run->label != verdict.baseline)
    out += fmt::format(", {:.2f}x {}", *best.speedup_vs_baseline, verdict.baseline);
  std::size_t tied = 0;
  for (const RankedSchedule& r : verdict.ranked) tied += r.rank == 1 ? 1 : 0;
  if (tied > 1) out += fmt::format(" (tied with {} other{})", tied - 1, tied > 2 ? "s" : "");
  return out + ".";
}

std::vector<const ScheduleRun*> runs_in_order(const ScenarioRun& result, const Verdict& verdict,
                                              bool by_speed) {
  std::vector<const ScheduleRun*> out;
  if (!by_speed) {
    for (const ScheduleRun& r : result.runs) out.push_back(&r);
    return out;
  }
  for (const RankedSchedule& r : verdict.ranked) out.push_back(r.run);
  for (const ScheduleRun& r : result.runs)
    if (r.simulation.status != RunStatus::Ok) out.push_back(&r);
  return out;
}

ReportRows level_rows(MetricLevel level, const std::string& title, const Scenario& scenario,
                      const std::vector<const ScheduleRun*>& runs, Footnotes* notes) {
  MetricColumns columns = metric_columns(column_metrics(level), scenario, runs);
  ReportRows out;
  out.header.push_back(title);
  const bool status = level == MetricLevel::Simulation;
  const bool closed_form = level == MetricLevel::Formula;
  if (status) out.header.emplace_back("status");
  out.header.insert(out.header.end(), columns.headings.begin(), columns.headings.end());
  if (closed_form) out.header.emplace_back("closed form");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ScheduleRun& r = *runs[i];
    std::vector<std::string> row{r.label};
    if (status) row.emplace_back(run_status_name(r.simulation.status));
    row.insert(row.end(), columns.rows[i].begin(), columns.rows[i].end());
    if (closed_form) {
      const std::string& note = r.formula.note;
      std::string cell = r.has_formula ? "" : "none";
      if (!note.empty()) {
        const std::string shown = notes != nullptr ? notes->ref(note) : note;
        cell = cell.empty() ? shown : cell + " " + shown;
      }
      row.push_back(cell.empty() ? "-" : cell);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::vector<DetailTable> detail_tables(const Scenario& scenario,
                                       const std::vector<const ScheduleRun*>& runs) {
  struct Column {
    std::string metric;
    std::string_view heading;
  };
  struct Group {
    std::string_view name, title;
    std::vector<Column> columns;
  };
  // The sections of the numbers the report reads itself, then each behaviour's section
  // (component_kind.h) after the one it names, its rows' headings as columns; behaviours that
  // name one section share it, in registration order.
  static const std::vector<Group> groups = [] {
    std::vector<Group> out = {
        {"all-to-all",
         "Expert all-to-all (the device with the most; hidden = all-to-all - exposed)",
         {{"simulation.a2a_s", "all-to-all"},
          {"simulation.a2a_exposed_s", "exposed"},
          {"simulation.a2a_slowdown_s", "slowed compute"}}},
        {"gradient buckets",
         "Gradient buckets beside compute (the device with the most; overlap.comm_sm_fraction)",
         {{"simulation.dp_sm_slowdown_s", "slowed compute"}}},
    };
    auto named = [&](std::string_view name) {
      return std::find_if(out.begin(), out.end(), [&](const Group& g) { return g.name == name; });
    };
    for (const ComponentKind& kind : builtin_components()) {
      if (kind.section.name.empty()) continue;
      auto group = named(kind.section.name);
      if (group == out.end()) {
        auto after = named(kind.section.after);
        group = out.insert(after == out.end() ? out.end() : after + 1,
                           Group{kind.section.name, kind.section.title, {}});
      }
      for (const ResultRow& row : kind.rows) {
        if (!row.heading.empty())
          group->columns.push_back({fmt::format("simulation.{}", row.key), row.heading});
      }
    }
    return out;
  }();
  std::vector<DetailTable> out;
  for (const Group& g : groups) {
    std::vector<const Metric*> metrics;
    std::vector<std::string> headings;
    for (const Column& c : g.columns) {
      metrics.push_back(find_metric(c.metric));
      headings.emplace_back(c.heading);
    }
    MetricColumns columns = metric_columns(metrics, headings, scenario, runs);
    if (columns.headings.empty()) continue;
    DetailTable table{std::string(g.title), {}};
    table.rows.header.emplace_back(g.name);
    table.rows.header.insert(table.rows.header.end(), columns.headings.begin(),
                             columns.headings.end());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<std::string> row{runs[i]->label};
      row.insert(row.end(), columns.rows[i].begin(), columns.rows[i].end());
      table.rows.rows.push_back(std::move(row));
    }
    out.push_back(std::move(table));
  }
  return out;
}

ReportRows stage_cost_rows(const ResolvedScenario& resolved) {
  const auto& stages = resolved.costs.stages;
  // With MoE, the routed experts' share of the static memory and of M_B (docs/moe.md).
  const bool experts = has_expert_memory(stages);
  std::vector<std::string> headings{"stage", "T_F", "T_B", "T_W", "M_B", "M_W", "static", "p2p"};
  if (experts) headings.insert(headings.end(), {"expert static", "expert M_B"});
  std::vector<std::vector<Cell>> rows;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageCost& c = stages[s];
    rows.push_back({Cell::text(std::to_string(s)), Cell::seconds(c.forward),
                    Cell::seconds(c.backward_input), Cell::seconds(c.backward_weight),
                    Cell::bytes(c.activation), Cell::bytes(c.weight_grad),
                    Cell::bytes(c.static_memory), Cell::bytes(c.p2p)});
    if (experts) {
      rows.back().push_back(Cell::bytes(c.moe.expert_static));
      rows.back().push_back(Cell::bytes(c.moe.expert_activation));
    }
  }
  CellText text = write_cells(headings, rows);
  return ReportRows{text.headings, collapse_numbered_rows(text.rows, 0)};
}

std::vector<std::string> mtp_cost_notes(const ResolvedScenario& resolved) {
  std::vector<std::string> out;
  if (!resolved.model_costs) return out;
  const std::vector<StageBreakdown>& stages = resolved.model_costs->stages;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageBreakdown& b = stages[s];
    if (b.mtp.depth <= 0) continue;
    auto time = [](double seconds) { return format_metric(MetricUnit::Seconds, seconds); };
    out.push_back(fmt::format(
        "stage {} holds the multi-token prediction module{} (model.mtp_depth {}: per depth two "
        "norms, the 2h -> h projection, one transformer block of the model's kind, a second LM "
        "head pass and loss), included above: T_F {}, T_B {}, T_W {} of compute, M_B {}, static "
        "{}",
        s, b.mtp.depth > 1 ? "s" : "", b.mtp.depth, time(b.forward.mtp), time(b.backward_input.mtp),
        time(b.backward_weight.mtp), format_metric(MetricUnit::Bytes, b.mtp.activation.as_double()),
        format_metric(MetricUnit::Bytes, b.mtp.static_memory.as_double())));
  }
  return out;
}

}  // namespace bubblesim
