#pragma once
// The JSON report (versioned schema). Layout, which later versions only extend:
//   schema_version, scenario (resolved), results: [{schedule, label, params, status, failure,
//   formula: {bubble_ratio, peak_activation_units, note} | null,
//   table: {makespan_s, bubble_ratio},
//   simulation: {makespan_s, stage_span_max_s, bubble_ratio, bubble_ratio_span,
//                peak_activation_bytes, peak_activation_bytes_per_device, peak_activation_units,
//                peak_memory_bytes_per_device, peak_memory_time_s_per_device, exposed_comm_s,
//                recompute_s, offloaded_bytes, exposed_offload_s, d2h/h2d busy and utilisation per
//                device, busy_s_per_device, out_of_memory, ...},
//   passes: [{name, policy, count_per_device, bytes_per_device, stages, ...}] (docs/memory.md),
//   components: {engaged: [behaviour names], refused: {shortcut: the behaviour that refused it}}
//   (the engine's behaviours in the simulation, docs/engine.md "Components"),
//   run: {wall_time_s, generate_s, streamed, events, events_per_s, passes_s: {pass: seconds}
//   and skipped_passes: [names] when the scenario asks for table passes}}]
//   (an infeasible schedule: {schedule, label, status: "infeasible", failure,
//    infeasible: {reason, facts: [{name, value}], remedy}, formula/table/simulation: null}),
//   skipped: [...],
//   ranking: [{schedule (label), rank, speedup_vs_baseline}] (the verdict: schedules that ran
//   without failing, fastest first), ranking_metric ("simulation.makespan_s"), baseline,
//   level_rankings: {formula, table, simulation, changes},
//   analysis: {offload_k, offload_k_stage, offload_k_formula, offload_hidden, ...},
//   run: {wall_time_s (the whole run: loading, setup, every schedule), setup_s (loading and
//   resolving the scenario), events, events_per_s (per second of the schedules' runs)}
// Every metric of the metric table (sim/report/metric_table.h) is in its level's object.
// Everything except the `run` objects is byte-identical between runs of the same input.
// Version 2: `ranking` became the verdict list (version 1's ranking object is level_rankings).

#include <nlohmann/json.hpp>

#include "sim/report/report_options.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

inline constexpr int kReportSchemaVersion = 2;

nlohmann::json schedule_run_to_json(const Scenario& scenario, const ScheduleRun& run);
/// {engaged: [names], refused: {"list-replay": name, ...}}: a replay's behaviours and the
/// shortcuts they refused (also in `explain --format json`).
nlohmann::json component_use_json(const ComponentUse& use);
nlohmann::json scenario_report_json(const Scenario& scenario, const ScenarioRun& result,
                                    const ReportOptions& options = {});

}  // namespace bubblesim
