#pragma once
// The table passes of a run, through one runner, as DuckDB's optimizer runs each of its passes
// through one wrapper: the all-to-all pairing (parallelism.a2a_overlap, docs/moe.md) and the
// memory passes (memory.recompute, memory.offload, docs/memory.md). Each pass is declared once
// below its runner: its name, when the scenario asks for it, why a streamed replay cannot have
// it, and what it does to a table. run_table_passes runs the ones the scenario asks for in
// order, times each, validates the table after each (so a pass that breaks the table is the one
// named), and leaves out those the command line disables by name (`--skip-pass NAME`, an
// ablation: CommandLineSettings::skip_passes). The scenario runner calls it; no pass is wired in
// anywhere else.
//
// A new pass is one entry in table_passes() (table_passes.cpp) and its function under
// schedules/passes/.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/passes/pass_decision.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/runner/resolve.h"
#include "sim/runner/schedule_run.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

/// What a pass reads and changes: the table of one schedule, in place.
struct PassContext {
  const ResolvedScenario& resolved;
  const ScheduleRequest& request;  // where errors about the pass's settings point
  Table& table;
  const std::vector<StageCost>& stage_costs;  // per table stage
  std::int32_t& replays;                      // engine replays a pass makes (ScheduleRun::effort)
};

struct TablePass {
  /// Its name on the command line (`--skip-pass NAME`) and in `run.passes_s` of the JSON report.
  std::string_view name;
  /// Whether the scenario asks for it, for a schedule whose table stages cost `stage_costs`.
  bool (*wanted)(const ResolvedScenario& resolved, const std::vector<StageCost>& stage_costs);
  /// Why a schedule with this pass cannot be replayed from its order stream (stream_choice.h),
  /// in the scenario's terms; null when another check already refuses every scenario that asks
  /// for it.
  std::string_view (*stream_refusal)(const ResolvedScenario& resolved);
  /// Transforms ctx.table; what it decided for the reports, or nullopt when it changed nothing.
  std::optional<PassDecision> (*run)(PassContext& ctx);
};

/// Every pass, in the order they run.
std::span<const TablePass> table_passes();

/// The passes a run of `resolved` asks for and does not skip, for tables costing `stage_costs`.
/// Throws InputError for a skipped name that is no pass.
std::vector<const TablePass*> wanted_passes(const ResolvedScenario& resolved,
                                            const std::vector<StageCost>& stage_costs);

/// Runs wanted_passes() on ctx.table in order: each one timed into `effort.passes`, the table
/// validated after each that changed it (InputError at the schedule entry naming the pass), the
/// skipped ones listed in `effort.skipped_passes`. Returns what each pass decided.
std::vector<PassDecision> run_table_passes(PassContext& ctx, const std::string& schedule_name,
                                           RunEffort& effort);

}  // namespace bubblesim
