#pragma once
// The warm-up repack of a V order (two stages per device, d and 2p-1-d, as ZB-V): the ops a device
// runs before the first B of its first stage are the forwards of both stages, the B's of its second
// stage and their W's. A repeated building block (building_blocks.h) spaces them as its steady
// state does, which leaves the warm-up half empty. The repack keeps that multiset and runs the
// forwards first, as many as the order's peak allows: up to 2(p-1-d) of the first stage (the time
// its second stage's first forward needs to come back through the later devices), then the two
// stages' forwards alternately until the second stage holds min(d + 1, peak / 2) (the second-stage
// forwards that reach device d before its first B can) and the first stage the rest of the peak,
// then (B, W, forward) triples, the W freeing the room the next forward takes. The rest of the
// order is kept. The ZB repository's v_auto_schedule reorganizes its warm-up with the same counts
// (docs/optimizer.md).

#include <optional>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

/// `order` (F, B and W only, V placement) with every device's warm-up repacked, or nullopt when
/// the problem is not V-placed or the order does not replay.
std::optional<Order> repack_warm_up(const Problem& problem, const Order& order);

}  // namespace bubblesim::optimizer
