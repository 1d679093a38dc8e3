#pragma once
// The building-block construction of the controllable-memory V schedules (Qi et al., "Pipeline
// Parallelism with Controllable Memory", NeurIPS 2024, arXiv 2405.15362, section 3; sail-sg
// zero-bubble-pipeline-parallelism: zbv_greedy.py), as docs/schedule-rules.md 4.11 describes it.
// Internal to the v-half and v-min generators.
//
// Time is cut into unit slots (one op each when T_F = T_B = T_W). Device i places, for every
// microbatch j, four pattern ops at fixed offsets of its building block plus 6j:
//   F of chunk 0 (stage i), F of chunk 1 (stage 2p-1-i), B of chunk 1, B of chunk 0,
// where B is the backward for inputs. The offsets of the two variants are in their files; their
// four slots are distinct modulo 6, so no two pattern ops of a device share a slot, and every
// dependency sits in an earlier slot than its consumer (F chunk 0 runs down devices 0..p-1, F
// chunk 1 back up p-1..0, B chunk 1 down, B chunk 0 up). W placement (the code's put_w): walking
// the device's slots, every slot where no pattern op starts takes one pending W (a backward done in
// an earlier slot whose W is not placed yet), a chunk-1 W first, oldest first; W's still pending
// after the last pattern op follow in the same preference.
//
// The device's order is its ops sorted by slot. An event-driven replay needs only that order, so
// the idle slots vanish. Not implemented: the reference code's later passes (moving warm-up and
// cool-down ops to earlier free slots without raising the peak, then an eager "squeeze" timing
// with real costs); they shorten the ramps but do not change the steady state or the peak.

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "schedules/table.h"

namespace bubblesim::controllable_memory_detail {

/// Slot offsets of device i's building block: F chunk 0, F chunk 1, B chunk 1, B chunk 0.
using BuildingBlock = std::array<std::int64_t, 4>;

template <typename BlockOf>
Table build_v_table(std::int32_t p, std::int32_t m, BlockOf block_of) {
  Table t = Table::empty(p, 2, m, Placement::v_shape(p));
  for (std::int32_t i = 0; i < p; ++i) {
    const BuildingBlock block = block_of(i);
    const std::int32_t stage[2] = {i, 2 * p - 1 - i};
    std::map<std::int64_t, Op> pattern;  // slot -> op, distinct slots by construction
    for (std::int32_t j = 0; j < m; ++j) {
      const std::int64_t base = 6 * static_cast<std::int64_t>(j);
      pattern.emplace(base + block[0], Op::forward(stage[0], j));
      pattern.emplace(base + block[1], Op::forward(stage[1], j));
      pattern.emplace(base + block[2], Op::backward(stage[1], j));
      pattern.emplace(base + block[3], Op::backward(stage[0], j));
    }
    auto& ops = t.device_ops[static_cast<std::size_t>(i)];
    ops.reserve(6 * static_cast<std::size_t>(m));
    std::deque<Op> pending[2];                      // W's whose backward is done, per chunk
    std::vector<std::pair<std::int64_t, Op>> done;  // backwards in slot order, not yet pending
    std::size_t next_done = 0;
    auto place_w = [&]() {
      const int chunk = pending[1].empty() ? 0 : 1;
      ops.push_back(pending[chunk].front());
      pending[chunk].pop_front();
    };
    const std::int64_t last = pattern.rbegin()->first;
    for (std::int64_t slot = 0; slot <= last; ++slot) {
      // A backward that started in an earlier slot has finished: its W is pending.
      while (next_done < done.size() && done[next_done].first < slot) {
        const Op& b = done[next_done++].second;
        pending[b.stage == stage[1] ? 1 : 0].push_back(Op::weight(b.stage, b.microbatch));
      }
      auto it = pattern.find(slot);
      if (it != pattern.end()) {
        ops.push_back(it->second);
        if (it->second.kind == OpKind::Backward) done.emplace_back(slot, it->second);
      } else if (!pending[0].empty() || !pending[1].empty()) {
        place_w();
      }
    }
    while (next_done < done.size()) {
      const Op& b = done[next_done++].second;
      pending[b.stage == stage[1] ? 1 : 0].push_back(Op::weight(b.stage, b.microbatch));
    }
    while (!pending[0].empty() || !pending[1].empty()) place_w();
  }
  return t;
}

}  // namespace bubblesim::controllable_memory_detail
