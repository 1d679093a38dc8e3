#pragma once
// The simulated clock is 64-bit picoseconds (about 106 days). Op times that each fit can still add
// up past it over a schedule (many microbatches of long ops, many iterations): checked once the
// op times are known, before any replay, with an error at the key that sets the schedule's length
// and the arithmetic, instead of an overflow deep in a replay that names no key.

#include "sim/runner/resolve.h"

namespace bubblesim {

/// Throws InputError at pipeline.microbatches (or training.global_batch) when one stage's compute
/// over the replay, iterations x m x (F + B + W + R) plus its optimizer steps, passes half of the
/// clock's range (the other half is left for waits, transfers and idle time).
void check_clock_range(const Scenario& scenario, const ResolvedScenario& resolved);

}  // namespace bubblesim
