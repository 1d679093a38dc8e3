#pragma once
// The rows the engine's behaviours declare for what they measured (sim/engine/component_kind.h:
// ComponentKind::rows), as rows of the report's metric table: each behaviour's rows go after the
// row it names (ComponentKind::rows_after), so that the CSV columns they always had stay put.

#include <vector>

#include "sim/report/metric_table.h"

namespace bubblesim {

/// `table` with the built-in behaviours' rows inserted at the simulation level, in registration
/// order, each after the row it names, or at the end when it names none (or one not in `table`).
std::vector<Metric> with_component_rows(std::vector<Metric> table);

}  // namespace bubblesim
