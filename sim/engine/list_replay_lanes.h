#pragma once
// The list replay's working data (list_replay.h), shared by its general loop (list_replay.cpp)
// and its tight loop for plain tables (list_replay_plain.cpp). Private to sim/engine.

#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/op.h"
#include "schedules/stage_costs.h"
#include "sim/engine/device_memory.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim::list_replay {

inline constexpr std::int64_t kAbsent = std::numeric_limits<std::int64_t>::min();  // no such op
inline constexpr std::int64_t kPending = -1;                                       // not run yet
inline constexpr std::size_t kKinds = 6;                                           // F B W R O L

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

// One device during the replay: everything a visit reads and writes, together.
struct Lane {
  const Op* ops = nullptr;
  OpTiming* row = nullptr;
  std::uint32_t count = 0, cursor = 0;
  std::int64_t free = 0, busy = 0, exposed = 0, recompute = 0, first_start = -1;
  bool parked = false;
};

// The common case in one tight loop: F, B and W ops only, one replica, durations and memory
// from the per-stage table, and a constant delay between devices (or none). The same rules as
// the general loop of ListReplay::run, which handles everything else.
struct PlainTables {
  const StageData* stage;
  const std::int32_t* device_of_stage;
  const std::int64_t* delay_from_prev;  // per stage: the delay of an activation into F(s)
  const std::int64_t* delay_from_next;  // per stage: the delay of a gradient into B(s)
  std::int64_t *end_f, *end_b, *end_w;
  std::size_t m;
  std::int32_t stages;
};

// Runs every lane as far as its inputs allow, in sweeps over the lanes that alternate
// direction (activations flow forward, gradients backward), until a sweep makes no progress.
// Returns false when an op is not F, B or W: the general loop continues from the lanes' state.
bool run_plain(const PlainTables& t, std::vector<Lane>& lanes, std::vector<DeviceMemory>& memory,
               std::uint64_t& arrivals, std::uint64_t& completed);

}  // namespace bubblesim::list_replay
