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
//   run: {wall_time_s, events, events_per_s}}], skipped: [...], ranking: {...},
//   analysis: {offload_k, offload_k_stage, offload_k_formula, offload_hidden, ...}, run: {...}
// Everything except the `run` objects is byte-identical between runs of the same input.

#include <nlohmann/json.hpp>

#include "tools/runner/scenario_runner.h"

namespace bubblesim {

inline constexpr int kReportSchemaVersion = 1;

nlohmann::json schedule_run_to_json(const Scenario& scenario, const ScheduleRun& run);
nlohmann::json scenario_report_json(const Scenario& scenario, const ScenarioRun& result);

}  // namespace bubblesim
