#pragma once
// The exact method with offload and recompute (OptPipe's formulation, Li et al., arXiv
// 2510.05186), written as a time-indexed MILP solved with CBC. It applies when every duration and
// delay is a multiple of one time step and the horizon is at most `kMaxGridSteps` steps (unit
// costs, profiled costs on a coarse grid); otherwise the big-M MILP (milp.h) orders the ops
// without memory decisions.
//
//   variables  x[v][t] = 1 when op v starts at step t, for t in v's window [earliest, latest]
//              (longest paths through the dependencies, the horizon from the warm start); the F and
//              B of an activation come in two modes, kept-or-offloaded and recomputed; R, O and L
//              are optional (they start once exactly when their activation is recomputed /
//              offloaded): per activation the keep / offload / recompute decision is binary.
//   dependencies  (the strong time-indexed form) op v started by t only if u started by t - lag:
//              F chain, B chain (the boundary's delay), F -> B -> W, each stage in microbatch
//              order, F -> R -> B (recompute), F -> O -> L -> B (offload: the reload before its B).
//   streams    per device and step: at most one compute op (F, B, W, R) running, one D2H copy
//              (O), one H2D copy (L) — the copy engines' occupancy.
//   memory     per device and step t (every op boundary lies on a step): allocations started by
//              t (F: M_B, or the stage input when recomputed; R and L: M_B) minus releases ended by
//              t (B: M_B - M_W, plus the stage input when recomputed; W: M_W) and offloads ended
//              before t (O: M_B) <= the device's limit. The order of simultaneous events is the
//              timing model's (a reload's allocation first, an offload's release last).
//   objective  as milp.h (stage-span: W(first stage, m-1) end - F(first stage, 0) start per
//              device); z >= the certified lower bound.
//   warm start the search's schedule (its replay's start times and decisions).
// It is a relaxation of what the engine can run (a reload may start at any step, an R need not
// follow its B's previous op at once), so CBC's bound is a valid lower bound; a solution is read
// back into an order and plan and replayed by the timing model before it is used.

#include <cstdint>
#include <optional>

#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/milp.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

inline constexpr std::int64_t kMaxGridSteps = 400;

/// The common time step of every duration and delay, when the problem's horizon (`upper`, the
/// warm start's cost, plus the latest device's start) fits in kMaxGridSteps of it.
std::optional<std::int64_t> time_grid(const Problem& problem, std::int64_t upper);

/// Solves `problem` on the grid starting from `warm_start` (materialized, feasible) and its plan.
/// `window`: when set, only ops whose warm-start step lies in [first, last] move; the rest keep
/// their steps (the MILP on a window of the order).
struct StepWindow {
  std::int64_t first = 0, last = 0;
};
MilpResult solve_grid_milp(const Problem& problem, const Order& warm_start,
                           const MemoryPlan& warm_plan, const MilpLimits& limits,
                           std::optional<StepWindow> window = std::nullopt);

}  // namespace bubblesim::optimizer
