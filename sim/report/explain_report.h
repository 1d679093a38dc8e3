#pragma once
// The report of `bubblesim explain NAME SCENARIO` (docs/optimizer.md, "Explain"): the explained
// schedule's formula note, its memory decisions per device (O / L / R ops of the replayed table,
// the backwards that recompute per unit, the memory passes' decisions, peaks against the budget),
// and a comparison with every baseline at the same scenario: bubble at the table and simulation
// levels, iteration time, peak memory, out of memory, and the bubble as a multiple of the explained
// schedule's.
//
// JSON layout (explain_schema_version 1): schedule, label, listed, description, scenario {name,
// file, stages, microbatches, communication, budget_bytes_per_device | null}, formula {note,
// bubble_ratio, peak_activation_units} | null, status, failure, memory_decisions {devices:
// [{device, offloaded, reloaded, recomputed, recomputed_in_backward, recompute_units,
// recompute_unit_bytes, offloaded_bytes, reloaded_bytes, recompute_not_stored_bytes,
// peak_activation_bytes, peak_memory_bytes, budget_bytes}], passes: [...]}, comparison: [{schedule,
// label, role (explained | listed | added), status, out_of_memory, table {bubble_ratio_span,
// bubble_ratio, makespan_s, peak_memory_bytes}, simulation {bubble_ratio_span, bubble_ratio,
// makespan_s, peak_memory_bytes} | null when it did not finish, iteration_time_s | null,
// bubble_vs_explained {table, simulation} (null where undefined)}], skipped: [{schedule, reason}].
// Deterministic apart from the solve time some formula notes carry.

#include <nlohmann/json.hpp>
#include <string>

#include "sim/runner/explain.h"

namespace bubblesim {

inline constexpr int kExplainSchemaVersion = 1;

/// The text at most `width` characters per line (the comparison table folds into parts; longer
/// lines break at spaces).
std::string explain_report_text(const Scenario& scenario, const Generator& generator,
                                const ScheduleExplanation& e, std::size_t width = 100);
nlohmann::json explain_report_json(const Scenario& scenario, const Generator& generator,
                                   const ScheduleExplanation& e);

}  // namespace bubblesim
