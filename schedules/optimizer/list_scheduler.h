#pragma once
// Memory-aware list scheduling in the spirit of the zero-bubble paper's automatic scheduler
// (Qi et al., ICLR 2024, section 3.1; docs/schedule-rules.md 4.8): microbatch 0 runs through every
// stage with as many extra warm-up forwards as the activation limit and the time to the first B
// allow; then, microbatch by microbatch, each stage places its next F (making room by placing W's,
// and filling the wait for the previous stage's F with W's that fit) and its next B (same, from the
// last stage down); the W's left over close the schedule. Ops are placed with their exact end times
// under the fixed-delay replay, so the per-stage placement order is the schedule.

#include <optional>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct ListFlags {
  bool allow_bubble_before_first_b =
      false;                  // warm-up: stop before an F would pass the first B's arrival
  bool prioritize_b = false;  // skip an F this round when the next stage would wait for its B
  bool no_bubble_greedy =
      true;  // place a W into a wait that is shorter than the worst stage's bubble
};

/// The order for `problem` with its activation limits, or nullopt when a stage cannot make room
/// for an F or B (limit below M_B + the W's it must keep).
std::optional<Order> list_schedule(const Problem& problem, const ListFlags& flags);

/// All 8 flag combinations, in the paper's nesting order (each flag true, then false).
std::vector<ListFlags> all_list_flags();

}  // namespace bubblesim::optimizer
