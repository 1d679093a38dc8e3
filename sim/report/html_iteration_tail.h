#pragma once
// The HTML report's iteration tail (internal to html_report.cpp): with a gradient sync
// (docs/parallelism.md), what each device does after its last compute op, drawn in its timeline
// row: the gradient sync left exposed after the op, then the optimizer step. Without it a
// timeline ends at the last op while the makespan, which includes both, ends later. A report
// without a sync gets none of it: its data and script stay byte for byte what they were.

#include <nlohmann/json.hpp>
#include <string>

#include "sim/runner/schedule_run.h"

namespace bubblesim {

/// Per device with a tail: [device, last compute op's end, sync end, optimizer step end] in
/// microseconds. Empty without a sync plan.
nlohmann::json iteration_tails(const ScheduleRun& run);

}  // namespace bubblesim
