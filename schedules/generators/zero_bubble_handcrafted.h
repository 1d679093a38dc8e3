#pragma once
// Shared order of the zero-bubble paper's handcrafted schedules ZB-H1 and ZB-H2 (Qi et al., ICLR
// 2024, Fig. 3; docs/schedule-rules.md 4.6-4.7). The backward is split: B computes input gradients
// only and a W op per (stage, microbatch) computes weight gradients. Device r runs
//   1. `warmup` forwards (capped at m);
//   2. up to `rounds` rounds of (B, F) while forwards remain;
//   3. (B, W, F) while forwards remain;
//   4. (B, W) until every B is done;
//   5. the remaining W's.
// B's and W's each run in microbatch order, so the device defers `rounds` W's to the tail.
// ZB-H1: warmup p-r, rounds r. ZB-H2: warmup 2(p-r)-1, rounds 2r.

#include <algorithm>
#include <cstdint>
#include <functional>

#include "schedules/generator.h"

namespace bubblesim::zero_bubble {

/// The table for p = in.devices, m = in.microbatches with per-device warm-up and (B, F) rounds.
inline Table handcrafted_table(const GeneratorInput& in,
                               const std::function<std::int32_t(std::int32_t r)>& warmup,
                               const std::function<std::int32_t(std::int32_t r)>& rounds) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Table t = Table::empty(p, 1, m, Placement::straight(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(3 * static_cast<std::size_t>(m));
    std::int32_t f = 0, b = 0, w = 0;
    auto forward = [&] { ops.push_back(Op::forward(r, f++)); };
    auto backward = [&] { ops.push_back(Op::backward(r, b++)); };
    auto weight = [&] { ops.push_back(Op::weight(r, w++)); };
    const std::int32_t first = std::min(warmup(r), m);
    while (f < first) forward();
    for (std::int32_t k = 0; k < rounds(r) && f < m; ++k) {
      backward();
      forward();
    }
    while (f < m) {
      backward();
      weight();
      forward();
    }
    while (b < m) {
      backward();
      weight();
    }
    while (w < m) weight();
  }
  return t;
}

}  // namespace bubblesim::zero_bubble
