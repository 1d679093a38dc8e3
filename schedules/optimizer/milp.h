#pragma once
// The exact method: a mixed-integer program solved with CBC (COIN-OR), after the zero-bubble
// paper's ILP (Appendix G) with the order decided by binaries only where the dependency graph
// leaves it open.
//
//   variables  e_v >= T_v: end time of every op v (F, B, W of every stage and microbatch);
//              x_uv in {0, 1} for every same-device pair (u, v) whose order the transitive closure
//              of the dependencies does not fix (1: u before v); z: the objective.
//   dependencies  e_v >= e_u + delay + T_v (comm on cross-device F->F and B->B edges).
//   symmetry   the F's, B's and W's of one stage run in microbatch order (chain edges, part of the
//              closure, so they remove binaries rather than add constraints).
//   one op at a time  e_v >= e_u + T_v - M (1 - x_uv) and e_u >= e_v + T_u - M x_uv, with
//              M = U + max T (U = the heuristic's cost): in an optimal schedule every device's ops
//              lie within one window of length z <= U.
//   memory     before every F v: sum over the device's other ops u of delta_u [u before v] + M_B <=
//   L,
//              where [u before v] is 1 or 0 when the closure fixes it, else x_uv or 1 - x_vu.
//   objective  stage-span: z >= e_{W(d, m-1)} - e_{F(d, 0)} + T_F(d) for every device; makespan:
//              z >= e_{W(d, m-1)}. Also z >= the certified lower bound (problem.h), which is valid
//              for every schedule and lets CBC stop as soon as the incumbent reaches it.
//   warm start the heuristic's order (binaries) through Cbc_setMIPStartI; its cost is the cutoff.
// Offload and recompute are not in the program: they stay with the heuristic.

#include <cstdint>
#include <optional>
#include <string>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct MilpResult {
  bool available = false;  // false: built without CBC
  bool solved = false;     // CBC returned a solution (the warm start counts)
  bool proven_optimal = false;
  Order order;      // the solution's order per device (read back by time, materialized)
  MemoryPlan plan;  // its decisions (the time-indexed MILP's; keep all for the big-M one)
  std::string formulation = "big-M";  // or "time-indexed" (milp_grid.h)
  std::int64_t cost = 0;              // of `order`, re-evaluated by the exact timing model
  double best_bound = 0;              // CBC's bound, in ps (at least the certified lower bound)
  double seconds = 0;                 // solve time
  std::int64_t binaries = 0, rows = 0, nodes = 0;
  std::string status;  // "optimal", "time limit", "no solution", ...
};

/// Limits of one CBC run: wall-clock seconds, the run's deadline (cbc_handle.h: the LP
/// relaxations stop at it too) and, when positive, branch-and-bound nodes (a node limit keeps the
/// result deterministic).
struct MilpLimits {
  double seconds = 60;
  Clock::time_point deadline = kNoDeadline;
  std::int64_t nodes = 0;
  /// Time-indexed MILP only, when positive: look for a schedule of cost at most `target` (ps;
  /// below the warm start's cost, which is then no start) on the horizon of that cost. Proven
  /// infeasible: no schedule costs `target` or less (status "infeasible for the target").
  std::int64_t target = 0;
  /// A lower bound the caller has certified (ps), added to the model's own.
  std::int64_t known_bound = 0;
};

/// The big-M MILP is not built beyond this many order binaries (p = 8, m = 16 has 2880; p = 32,
/// m = 256 millions, which take longer to build than a time limit allows and CBC cannot search).
inline constexpr std::int64_t kMaxBigMBinaries = 100000;

/// Solves `problem` starting from `warm_start` (must be feasible) within `limits`.
MilpResult solve_milp(const Problem& problem, const Order& warm_start, const MilpLimits& limits);

/// Whether this build has the MILP (CBC found at configure time).
bool milp_available();

}  // namespace bubblesim::optimizer
