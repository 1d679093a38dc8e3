#pragma once
// The search's neighbourhoods: random changes of a compute order (F, B, W) and of a memory plan.
// Every order move keeps each stage's F's, B's and W's in microbatch order (the search space of
// docs/optimizer.md), so it never crosses an op of the same kind and stage.

#include <cstdint>
#include <random>

#include "schedules/optimizer/memory_plan.h"
#include "schedules/optimizer/problem.h"
#include "schedules/optimizer/timing_model.h"

namespace bubblesim::optimizer {

/// Swap two adjacent ops, or move a W by up to 8 places (the small neighbourhood).
bool small_order_move(Order& order, std::mt19937_64& rng);

/// Move any op by up to `reach` places on its device (the large neighbourhood).
bool insert_move(Order& order, std::int32_t reach, std::mt19937_64& rng);

/// Fill an idle gap of the replay `eval` of `order`: on `device` (or a random one when < 0), pick
/// an op that starts after a wait and move one of the next `reach` ops in front of it.
bool fill_gap_move(const Problem& problem, Order& order, const Evaluation& eval,
                   std::int32_t device, std::int32_t reach, std::mt19937_64& rng);

/// One op moved within its device's list: from position `from` towards `to`, as far as it can go.
struct OrderMove {
  std::int32_t device = 0;
  std::int32_t from = 0, to = 0;
};

/// The critical-block neighbourhood (van Laarhoven et al.'s for job shops) of the replay `eval` of
/// `order` (F, B, W; `eval` may also hold copies): walking back from the op that ends device
/// `device`'s ops, every op that waited for the op before it on its device closes a block of
/// back-to-back ops; the moves put the block's last op at each earlier place in the block and the
/// block's first op at each later place, nearest first.
std::vector<OrderMove> critical_moves(const Problem& problem, const Order& order,
                                      const Evaluation& eval, std::int32_t device);

/// Applies `move` (false when it changes nothing: the op would pass one of its kind and stage or
/// one it depends on, or that depends on it).
bool apply_move(Order& order, const OrderMove& move);

/// An activation kept -> offloaded (reload as late as the replay `eval` of `compute` allows) or
/// recomputed, offloaded or recomputed -> kept, or a reload one op earlier or later.
bool random_plan_move(const Problem& problem, const Order& compute, const Evaluation& eval,
                      MemoryPlan& plan, std::mt19937_64& rng);

}  // namespace bubblesim::optimizer
