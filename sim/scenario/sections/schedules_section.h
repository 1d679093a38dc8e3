#pragma once
// Section reader `schedules`: a list of generator names or `{name, params: {...}}` (a single
// name is a one-entry list), each checked against the registry and its generator's parameters;
// absent = every registered generator but from-file, with defaults (ScheduleRequest::defaulted).
// Sets Scenario::schedules. A repeated entry (same name and parameters) and more than
// kMaxScheduleEntries entries are errors: each runs the whole replay again.

#include <cstddef>

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

/// The most entries `schedules:` may list (parameter studies beyond that are sweeps).
inline constexpr std::size_t kMaxScheduleEntries = 256;

void read_schedules_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
