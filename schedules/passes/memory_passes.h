#pragma once
// Memory passes: pure functions that add recompute (R) or offload / reload (O / L) ops to any
// table, so they combine with every schedule. Each returns the new table and a log of what it
// decided (reported per result). See docs/memory.md.
//
//   recompute  granularity stage: every (stage, microbatch) of the chosen table stages (all, an
//              explicit list, or the first ceil(fraction * stages) ones, which hold the most
//              activations in 1F1B-like schedules) gets R(s, j) listed right before its B, so F
//              keeps only the stage input until R rebuilds the activation. Every other policy
//              recomputes inside the backward, a change of the stage costs made by the resolve
//              step: the pass leaves the table alone and reports which backwards recompute.
//   offload    full: every activation whose idle window on its device (F end to B start in the
//              idealized replay given as data) is at least D2H + H2D copy time at the route's
//              bandwidth + min_idle gets O(s, j) right after its F and L(s, j) right after the
//              compute op `prefetch` compute ops before its B (the engine starts a copy op no
//              earlier than the compute op listed before it). selective: among those, an explicit
//              list of table stages, or per device the longest-lived half (PipeOffload: prefer the
//              activations that live longest).
// Activations that already have an R, O or L in the table are left alone; recomputed ones are not
// offloaded.

#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/passes/pass_decision.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/units/rates.h"

namespace bubblesim {

/// Start and end of one op in a replay, parallel to Table::device_ops.
struct OpWindow {
  Time start;
  Time end;
};
using TableTimings = std::vector<std::vector<OpWindow>>;

struct PassResult {
  Table table;
  PassDecision decision;
};

PassResult apply_recompute_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                                const RecomputeSettings& settings);

/// `ideal`: timings of `table` replayed without communication. Throws std::invalid_argument when
/// the timings or bandwidths do not match the table, or prefetch < 1.
PassResult apply_offload_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                              const TableTimings& ideal, const OffloadSettings& settings);

}  // namespace bubblesim
