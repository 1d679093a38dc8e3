#pragma once
// The list replay's working data (list_replay.h), shared by its general loop (list_replay.cpp)
// and its tight loop for plain tables (list_replay_plain.cpp). Both are the list-scheduling
// kernel (schedules/list_scheduling.h) with their own end-time store and policies. Private to
// sim/engine.

#include <cstdint>
#include <span>
#include <vector>

#include "schedules/list_scheduling.h"
#include "schedules/op.h"
#include "schedules/stage_costs.h"
#include "sim/engine/device_memory.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim::list_replay {

using list_scheduling::kAbsent;
using list_scheduling::kPending;
inline constexpr std::size_t kKinds = 6;  // F B W R O L

inline std::size_t kind_index(OpKind k) { return static_cast<std::size_t>(k); }

// Per table stage, what the loop reads for every op of the stage (durations in ps, bytes).
struct StageData {
  std::int64_t forward, backward_input, full_backward, weight, recompute, fused;
  Bytes activation, stage_input, p2p;
  // Without recompute: what a B frees (unsplit, or split under the release convention) and
  // what the W of a split backward frees then (device_memory.h's rules, clamped once here).
  Bytes unsplit_free, split_free, weight_free;
  Bytes split_growth, unsplit_growth;  // backward_growth of a (un)split B, at its start
  const StageCost* cost;
};

// One device during the replay: its order, where its timings go, how far it ran (the kernel's
// lane source).
struct Lane {
  const Op* ops = nullptr;
  OpTiming* row = nullptr;
  std::uint32_t count = 0, cursor = 0;
  list_scheduling::LaneClock clock;
  std::int64_t recompute = 0;
  bool parked = false;

  std::span<const Op> ahead() const { return {ops + cursor, ops + count}; }
  void ran(std::size_t i, const list_scheduling::Slot& slot) {
    row[cursor + i] = OpTiming{Time::from_ps(slot.start), Time::from_ps(slot.end)};
  }
  void advance(std::size_t n) { cursor += static_cast<std::uint32_t>(n); }
};

// The common case in one tight loop: F, B and W ops only, one replica, durations and memory
// from the per-stage table, and a constant delay between devices (or none). The same kernel as
// the general loop of ListReplay::run, which handles everything else.
struct PlainTables {
  const StageData* stage;
  const std::int64_t* boundary_delay;  // per stage s: the delay between stages s and s + 1
  std::int64_t *end_f, *end_b, *end_w;
  std::size_t m;
  std::int32_t stages;
};

// Runs every lane as far as its inputs allow, in sweeps over the lanes that alternate
// direction (activations flow forward, gradients backward), until a sweep makes no progress.
// Returns the ops run. Every op of the lanes must be F, B or W.
std::uint64_t run_plain(const PlainTables& t, std::vector<Lane>& lanes,
                        std::vector<DeviceMemory>& memory);

}  // namespace bubblesim::list_replay
