#pragma once
// V-placement seeds built from repeated building blocks (Qi et al., "Pipeline Parallelism with
// Controllable Memory", NeurIPS 2024, section 3 and Appendix A; docs/schedule-rules.md 4.11): time
// is cut into unit slots, and every device repeats a pattern of six slots per microbatch (F and B
// of each chunk, and the two W's in the first free slots after their B's). Device 0's pattern is
// one of the 60 placements of its F chunk 1, B chunk 1 and B chunk 0 relative to its F chunk 0;
// device d+1's pattern is device d's shifted by a uniform offset (F chunk 0 and B chunk 1 move k
// slots later, F chunk 1 and B chunk 0 one slot earlier, k in 1..5, one k for the first devices and
// another for the rest). A device's order is its ops sorted by slot; the memory a pattern needs is
// set by the lifespans it implies, so the patterns span the memory-bubble curve. The search keeps
// those whose order fits the limit, best estimated bubble (unit slots) first. Each block's own
// order is also repaired (warm_up.h, then cool_down.h); that takes about a fifth more time
// (p 32, m 64: 6.4 s instead of 5.4 s on one core).

#include <cstddef>
#include <vector>

#include "schedules/optimizer/deadline.h"
#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct BlockOrders {
  /// Up to `keep` of the blocks' orders and their compactions that fit the problem's limits, best
  /// replayed cost first (with offload or recompute also the best ones by slot bubble that do not
  /// fit, for fit_memory).
  std::vector<Order> plain;
  /// Up to `keep` of those orders repaired: warm-up repacked (warm_up.h), and with or without that,
  /// cool-down rebuilt (cool_down.h); best replayed cost first.
  std::vector<Order> repaired;
};

/// Stops enumerating, compacting and repairing at `deadline` (deadline.h) with what it has.
BlockOrders building_block_orders(const Problem& problem, std::size_t keep,
                                  Clock::time_point deadline = kNoDeadline);

}  // namespace bubblesim::optimizer
