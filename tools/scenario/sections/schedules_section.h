#pragma once
// Section reader `schedules`: a list of generator names or `{name, params: {...}}` (a single
// name is a one-entry list), each checked against the registry and its generator's parameters;
// absent = every registered generator but from-file, with defaults (ScheduleRequest::defaulted).
// Sets Scenario::schedules.

#include "tools/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_schedules_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
