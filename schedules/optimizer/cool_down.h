#pragma once
// The cool-down rebuild: after a device's last F nothing allocates activation memory any more
// (a B frees M_B - M_W, a W frees M_W), so from there on its B's and W's may run in any order that
// respects their dependencies without raising the peak (where M_W > M_B a B would allocate: it is
// then placed only when it fits). The rebuild keeps every device's ops up to its last F in order
// and reschedules the rest by event-driven list scheduling under the exact replay timing: the B
// that can start first (at equal start the one of the later stage, whose chain of B's down to
// stage 0 is longest), a pending W only where it ends before that B could start or where no B is
// ready. W's are deferred, so the B chains that set the cool-down's length run back to back.
//
// Orders built for the steady state (building blocks, list schedules) often end with the W's
// interleaved in their cool-down as in their steady state; the local moves cannot defer many W's
// on several devices at once, which is what shortens the cool-down (the ZB repository's
// v_auto_schedule rebuilds its cool-down the same way, in unit slots). docs/optimizer.md.

#include <optional>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

/// `order` (F, B and W only) with every device's ops after its last F rescheduled, or nullopt when
/// the rescheduling gets stuck (an op waits for one that cannot run, or a B that would allocate
/// does not fit and no W is left to make room).
std::optional<Order> rebuild_cool_down(const Problem& problem, const Order& order);

}  // namespace bubblesim::optimizer
