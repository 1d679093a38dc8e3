// The Markdown report (a CI job summary): the verdict, then the level tables and the failures.
#include <fmt/format.h>

#include "sim/report/idle_split_report.h"
#include "sim/report/markdown_escape.h"
#include "sim/report/ranking.h"
#include "sim/report/report_format.h"
#include "sim/report/report_rows.h"
#include "sim/report/text_report.h"

namespace bubblesim {
namespace {

std::string md_table(const ReportRows& rows, std::size_t left_columns = 1) {
  std::string out = "|";
  std::string rule = "|";
  for (std::size_t i = 0; i < rows.header.size(); ++i) {
    out += " " + markdown_text(rows.header[i]) + " |";
    rule += i < left_columns ? "---|" : "---:|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : rows.rows) {
    out += "|";
    for (const std::string& c : row) out += " " + markdown_text(c) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string scenario_report_markdown(const Scenario& scenario, const ScenarioRun& result,
                                     const ReportOptions& options) {
  const Verdict verdict = make_verdict(scenario, result, options.baseline);
  std::string out =
      fmt::format("## bubblesim: {}\n\np = {} stages, m = {} microbatches, communication: {}\n\n",
                  markdown_text(scenario.labels.name), scenario.stages, scenario.microbatches,
                  report_format::communication_summary(scenario));
  out += "**" + markdown_text(verdict_headline(verdict)) + "**\n\n";
  if (!verdict.ranked.empty()) {
    ReportRows ranked = verdict_rows(scenario, verdict);
    out += md_table(ranked, 2) + "\n";
  }
  if (!verdict.baseline_note.empty()) out += markdown_text(verdict.baseline_note) + "\n\n";
  for (const std::string& note : verdict.notes) out += markdown_text(note) + "\n\n";
  for (const std::string& w : verdict.warnings) out += "Warning: " + markdown_text(w) + "\n\n";
  if (const ReportRows idle = idle_split_rows(verdict); !idle.rows.empty())
    out += "Idle time by cause, % of devices x makespan:\n\n" + md_table(idle) + "\n";
  if (!verdict.failed.empty()) {
    out += "Failed:\n\n";
    for (const FailedSchedule& f : verdict.failed)
      out += fmt::format("- **{}**: {}\n", markdown_text(f.label), markdown_text(f.reason));
    out += "\n";
  }
  const std::vector<const ScheduleRun*> runs = runs_in_order(result, verdict, options.compare);
  out += "### Formula\n\n" +
         md_table(level_rows(MetricLevel::Formula, "schedule", scenario, runs, nullptr)) + "\n";
  out += "### Table (scenario costs, no communication)\n\n" +
         md_table(level_rows(MetricLevel::Table, "schedule", scenario, runs, nullptr)) + "\n";
  out += "### Simulation\n\n" +
         md_table(level_rows(MetricLevel::Simulation, "schedule", scenario, runs, nullptr), 2);
  for (DetailTable& t : detail_tables(scenario, runs)) {
    t.rows.header[0] = "schedule";
    out += fmt::format("\n### {}\n\n{}", t.title, md_table(t.rows, 1));
  }
  if (result.resolved.model_costs) {
    out += "\n### Per-GPU stage costs derived from the model\n\n" +
           md_table(stage_cost_rows(result.resolved), 1);
    const std::vector<std::string> mtp = mtp_cost_notes(result.resolved);
    if (!mtp.empty()) out += "\n";
    for (const std::string& line : mtp) out += markdown_text(line) + ".\n";
  }
  Ranking ranking = rank_schedules(result);
  if (!ranking.changes.empty()) {
    out += "\n### Ranking changes between levels\n\n";
    for (const RankingChange& c : ranking.changes) {
      out += fmt::format("- {} beats {} at the {} level but not at the {} level: {}\n",
                         markdown_text(c.better), markdown_text(c.worse), c.from_level, c.to_level,
                         markdown_text(c.reason));
    }
  } else if (result.runs.size() > 1) {
    out += "\nThe ranking of schedules is the same at every level.\n";
  }
  return out;
}

}  // namespace bubblesim
