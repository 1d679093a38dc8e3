#pragma once
// The engine's SyncPlan for one table under a scenario's parallelism (docs/parallelism.md).

#include <memory>

#include "schedules/table.h"
#include "sim/engine/gradient_sync.h"
#include "sim/runner/resolve.h"

namespace bubblesim {

/// Null when the scenario has no parallelism or no topology. Table stage s takes profile stage
/// s / chunks with gradient bytes, optimizer and TP times divided by chunks; a device's optimizer
/// step covers every stage it holds (replicas included).
std::shared_ptr<const SyncPlan> make_sync_plan(const ResolvedScenario& resolved,
                                               const Table& table);

}  // namespace bubblesim
