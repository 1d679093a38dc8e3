#pragma once
// An event-driven greedy list scheduler for any placement (straight or V): the device that is free
// first places its next op by priority rules under its activation limit, with the exact timing of
// the replay (an op starts at max(device free, dependencies + delays)), so the placement order is
// the schedule. It seeds the search where the zero-bubble list scheduler (list_scheduler.h) does
// not apply (V placement) and, with random tie-breaking, gives the search's restarts new starts.
//
// Rules at the device's free time t, in order:
//   1. a B whose inputs are there (the oldest microbatch first, the later stage first);
//   2. an F whose input is there and whose memory fits, keeping room for later-stage F's of the
//      microbatches already on the device (so a V device does not fill up with first-chunk
//      activations it cannot finish), at most `inflight` microbatches on the device at once;
//   3. a pending W, when it ends before the next B or F can start (or delays it by at most
//      `w_slack` of its own duration), or when an F needs the room it frees;
//   4. otherwise wait for the next op to become ready.

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "schedules/optimizer/problem.h"

namespace bubblesim::optimizer {

struct GreedyRules {
  /// Microbatches in flight per device (F of its first stage done, last W not): this factor times
  /// the device's "natural" warm-up (the stages from its first one to the end, per stage it holds);
  /// 0 = only memory limits it.
  double inflight = 0;
  /// A W may delay the next ready op by up to this fraction of its own duration.
  double w_slack = 0;
  bool forward_before_backward = false;  // rule 2 before rule 1
  /// true: a new microbatch needs room for the later-stage F's of every microbatch on the device;
  /// false: room for one more later-stage F (tighter memory, may deadlock: then no order).
  bool reserve_all = true;
  /// With a random source, ties and near-ties (within `noise` of the op's duration) are broken at
  /// random, for restarts.
  double noise = 0;
};

/// The order, or nullopt when a device cannot make room (its limit holds less than one microbatch
/// of each of its stages plus the W's it must keep) or nothing can run.
std::optional<Order> greedy_schedule(const Problem& problem, const GreedyRules& rules,
                                     std::mt19937_64* random = nullptr);

/// `order` rescheduled by priority (its list positions): a device that would wait for its next op
/// runs a later one that is ready, as long as it ends by then (or by `w_slack` of its duration
/// later) and fits the memory (with the reservation rule): warm-ups and cool-downs close up
/// without raising the peak beyond the limit. Only `w_slack` and `reserve_all` of the rules apply.
std::optional<Order> compact(const Problem& problem, const Order& order, const GreedyRules& rules);

/// A small set of rules that covers the useful corners (deterministic, no noise).
std::vector<GreedyRules> greedy_rule_set();

}  // namespace bubblesim::optimizer
