#pragma once
// The resolve step's cost part: from what a scenario says to the per-GPU cost of every stage
// (docs/models.md, docs/parallelism.md).
//
//   with `model:`  sim/costmodel/model_costs.h at the scenario's tensor / sequence parallelism,
//                  ZeRO level, recompute policy and `costs.per_layer`, the TP and ZeRO
//                  collectives timed as flows on each stage's groups of the topology; explicit
//                  `costs` values then replace the derived ones.
//   without        the explicit (or profiled) costs.
// Explicit values are one GPU's with `costs.per: gpu`; with `per: stage` (the default) times and
// sizes are divided by the TP degree, except `recompute`, which is the time of one recompute and
// never rescaled. Recompute inside the backward (`memory.recompute` but `granularity: stage`)
// makes B longer by what it redoes (the model's, or an explicit `costs.recompute`; without a
// model full recompute checkpoints the stage as one unit) and F keep less.

#include "sim/runner/resolve.h"

namespace bubblesim {

/// Fills resolved.costs, resolved.model_costs and resolved.sync. Throws InputError (located at
/// the scenario key concerned) when the model cannot be split as asked or a collective cannot be
/// timed on the topology.
void resolve_costs(const Scenario& scenario, ResolvedScenario& resolved);

}  // namespace bubblesim
