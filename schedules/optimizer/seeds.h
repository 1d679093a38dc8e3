#pragma once
// Starting orders of the search: handcrafted ones (1F1B with split backward, ZB-H1, ZB-H2 for the
// straight placement; ZB-V and repeated building blocks for V; interleaved 1F1B with groups of p
// and of p / 2 for the interleaved placement), the zero-bubble list scheduler
// (straight, every flag combination, at the limit and at smaller and, with offload or recompute,
// larger limits) and the greedy list scheduler (any placement, a small rule set); for V also the
// repaired building blocks, as finished schedules. With offload, every seed but the list
// scheduler's also with its W's right after their B's (a copy frees an activation only before its
// B). Seeds may not fit the limit: the search fits them (fit_memory) or drops them.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct Seed {
  std::string name;
  Order order;  // F, B and W only
  /// A finished schedule (a repaired building block): the search compares its result with it but
  /// does not start or restart from it (search.h).
  bool finished = false;
  /// Fitted even after the deadline: the zero-bubble heuristic's own construction (the
  /// list scheduler at the limit, its 8 flag combinations), so that a short time limit never
  /// gives a plan worse than that heuristic's; cheap (one list schedule and one fit each).
  bool required = false;
};

/// The seeds; the V placement's building blocks stop at `deadline` (deadline.h), the placement's
/// own order (ZB-V) is always there.
std::vector<Seed> seed_orders(const Problem& problem, Clock::time_point deadline = kNoDeadline);

/// Straight placement: warm-up `warmup(r)` forwards, `rounds(r)` (B, F) pairs, then (B, W, F)
/// triples (docs/schedule-rules.md 4.6-4.7); factors (1, 0): 1F1B with split backward, (1, 1):
/// ZB-H1, (2, 2): ZB-H2.
Order handcrafted_order(std::int32_t p, std::int32_t m, std::int32_t warmup_extra_factor,
                        std::int32_t rounds_factor);

/// Interleaved placement (two chunks, stage c p + d on device d): Megatron's interleaved 1F1B with
/// microbatch groups of `group` (PipeOffload's interleave group; Megatron's is p) and every W right
/// after its B: (p - d - 1) lead + group warm-up forwards (Megatron: lead 2), then one forward and
/// one backward in turn.
Order interleaved_order(std::int32_t p, std::int32_t m, std::int32_t group, std::int32_t lead);
/// V placement: the ZB-V order of PyTorch's ScheduleZBVZeroBubble (docs/schedule-rules.md 4.10).
Order zb_v_order(std::int32_t p, std::int32_t m);

}  // namespace bubblesim::optimizer
