#pragma once
// Section readers `name` + `description` (the labels) and `pipeline: {stages, microbatches}`:
// p pipeline stages (= devices, 1..65536) and m microbatches (1..1048576), both required
// (microbatches not when `training:` gives the global batch: training_section.h).

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

inline constexpr std::int64_t kMaxStages = 65536;
inline constexpr std::int64_t kMaxMicrobatches = 1048576;

void read_labels_section(LoadContext& context, Scenario& scenario);
void read_pipeline_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
