#pragma once
// Memory passes: pure functions that add recompute (R) or offload / reload (O / L) ops to any
// table, so they combine with every schedule. Each returns the new table and a log of what it
// decided (reported per result). See docs/memory.md.
//
//   recompute  full: every (stage, microbatch) gets R(s, j) listed right before its B, so F keeps
//              only the stage input until R rebuilds the activation. selective: only some stages
//              (an explicit list of table stages, or the first ceil(fraction * stages) ones, which
//              hold the most activations in 1F1B-like schedules).
//   offload    full: every activation whose idle window on its device (F end to B start in the
//              idealized replay given as data) is at least D2H + H2D copy time at the route's
//              bandwidth + min_idle gets O(s, j) right after its F and L(s, j) right after the
//              compute op `prefetch` compute ops before its B (the engine starts a copy op no
//              earlier than the compute op listed before it). selective: among those, an explicit
//              list of table stages, or per device the longest-lived half (PipeOffload: prefer the
//              activations that live longest).
// Activations that already have an R, O or L in the table are left alone; recomputed ones are not
// offloaded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/memory_settings.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/units/rates.h"

namespace bubblesim {

/// Start and end of one op in a replay, parallel to Table::device_ops.
struct OpWindow {
  Time start;
  Time end;
};
using TableTimings = std::vector<std::vector<OpWindow>>;

/// What one pass decided.
/// The name of the decision `parallelism.a2a_overlap`'s pairing makes (a2a_pairing.h): pairs,
/// no bytes; not a memory pass.
inline constexpr std::string_view kA2aPairingPass = "a2a pairing";

struct PassDecision {
  std::string name;  // "recompute", "offload", or kA2aPairingPass
  MemoryPolicy policy = MemoryPolicy::None;
  std::vector<std::int64_t> count_per_device;  // activations recomputed / offloaded
  std::vector<Bytes>
      bytes_per_device;  // recompute: bytes not stored (M_B - input); offload: bytes moved
  std::vector<std::int32_t> stages;  // table stages touched, ascending
  std::int64_t candidates = 0;       // activations considered
  std::int64_t rejected = 0;  // offload: window too short or not chosen; pairing: would deadlock
  std::int32_t prefetch = 0;  // offload only

  /// "offload pass (full): 12 of 24 activations on stages [0, 1], 12GiB moved" for reports.
  std::string summary() const;
};

struct PassResult {
  Table table;
  PassDecision decision;
};

PassResult apply_recompute_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                                const RecomputeSettings& settings);

/// `ideal`: timings of `table` replayed without communication. Throws std::invalid_argument when
/// the timings or bandwidths do not match the table, or prefetch < 1.
PassResult apply_offload_pass(const Table& table, const std::vector<StageCost>& stage_costs,
                              const TableTimings& ideal, const OffloadSettings& settings);

}  // namespace bubblesim
