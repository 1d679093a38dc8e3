#pragma once
// Closed forms shared by generators' Formula functions. Each assumes what its comment says; a
// generator only reports a formula when the input satisfies those assumptions.

#include <optional>

#include "schedules/stage_costs.h"

namespace bubblesim {

/// Whether every stage of the profile has the same F, B, W times (closed forms assume it).
bool has_uniform_stage_times(const CostProfile& costs);

/// GPipe/1F1B with uniform stages and no communication: (p-1)/(m+p-1).
double flush_pipeline_bubble_ratio(int devices, int microbatches);

/// Interleaved 1F1B with v chunks per device: (p-1)/(v m + p-1).
double interleaved_bubble_ratio(int devices, int microbatches, int chunks);

}  // namespace bubblesim
