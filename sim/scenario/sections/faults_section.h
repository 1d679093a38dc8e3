#pragma once
// Section reader `faults` (docs/reliability.md):
//   faults: {stragglers: [{device, slowdown}], links: [{between: [a, b], at, bandwidth | cut}]}
// Link faults need a topology and name existing links. Sets Scenario::faults.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_faults_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
