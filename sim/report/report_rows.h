#pragma once
// The rows the text, Markdown and HTML reports share, as text cells: the verdict table and one
// table per abstraction level, built from the metric table (sim/report/metric_table.h).

#include <string>
#include <vector>

#include "sim/report/text_table.h"
#include "sim/report/verdict.h"

namespace bubblesim {

struct ReportRows {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// The verdict's columns in a recipe's units (docs/recipes.md): tokens/s/GPU, TFLOP/s/GPU, MFU
/// and GPU-hours per 10^12 tokens, one cell per ranked schedule; a column none of them has (no
/// model, no GPU peak) is left out.
struct RecipeColumn {
  std::string heading;
  std::vector<std::string> cells;
};
std::vector<RecipeColumn> recipe_columns(const Scenario& scenario, const Verdict& verdict);

/// rank, schedule, the ranking metric, speed-up, bubble, peak memory and its share of the budget;
/// then recipe_columns().
ReportRows verdict_rows(const Scenario& scenario, const Verdict& verdict);

/// One sentence: "zb-v is fastest: 770.55 ms simulated makespan, 1.23x 1f1b."
std::string verdict_headline(const Verdict& verdict);

/// The runs in the order a report shows them: scenario order, or the verdict's (fastest first,
/// failed runs last) when `by_speed`.
std::vector<const ScheduleRun*> runs_in_order(const ScenarioRun& result, const Verdict& verdict,
                                              bool by_speed);

/// The schedule label (`title` heads the column), the level's metrics with a column heading, and
/// for the simulation level the status first; for the formula level a last column "closed form"
/// with the note, or its footnote reference when `notes` is given.
ReportRows level_rows(MetricLevel level, const std::string& title, const Scenario& scenario,
                      const std::vector<const ScheduleRun*>& runs, Footnotes* notes);

/// Simulation metrics that only some scenarios produce, each group in a small table of its own
/// (the level tables stay narrow): the expert all-to-all (`a2a_s`, `a2a_exposed_s`,
/// `a2a_slowdown_s`; docs/moe.md) and blocking point-to-point (`blocked_send_s`, `host_gap_s`;
/// docs/iterations.md). A column missing or zero on every run is left out, and a table without
/// columns. `header[0]` is the group's short name, `title` says what it is.
struct DetailTable {
  std::string title;
  ReportRows rows;
};
std::vector<DetailTable> detail_tables(const Scenario& scenario,
                                       const std::vector<const ScheduleRun*>& runs);

/// Each stage's resolved per-GPU costs (after tensor parallelism): T_F, T_B, T_W, the memory kept
/// F -> B (M_B) and B -> W (M_W), static memory and the bytes sent to the next stage. Consecutive
/// stages whose written costs do not differ share one row ("1-6").
ReportRows stage_cost_rows(const ResolvedScenario& resolved);

/// One line per stage that holds multi-token prediction modules (`model.mtp_depth`, the LM
/// head's stage): what they add to that stage's T_F, T_B, T_W, M_B and static memory; none
/// without them.
std::vector<std::string> mtp_cost_notes(const ResolvedScenario& resolved);

}  // namespace bubblesim
