#pragma once
// PassDecision: what one table pass decided, for the reports (text, JSON, explain). The passes
// are the memory passes (memory_passes.h: recompute, offload) and `parallelism.a2a_overlap`'s
// pairing (a2a_pairing.h), which moves no bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/memory_settings.h"
#include "sim/units/bytes.h"

namespace bubblesim {

enum class PassKind { Recompute, Offload, A2aPairing };

/// "recompute", "offload" or "a2a pairing": the `name` in the JSON report's `passes`.
std::string_view pass_name(PassKind kind);

struct PassDecision {
  PassKind kind = PassKind::Recompute;
  MemoryPolicy policy = MemoryPolicy::None;  // memory passes only
  /// Recompute / offload: activations recomputed / offloaded; pairing: F&B ops made.
  std::vector<std::int64_t> count_per_device;
  /// Recompute: bytes not stored (M_B - what F keeps); offload: bytes moved; pairing: zero.
  std::vector<Bytes> bytes_per_device;
  std::vector<std::int32_t> stages;  // table stages touched, ascending (memory passes)
  /// Recompute / offload: activations considered; pairing: B ops directly followed by an F.
  std::int64_t candidates = 0;
  /// Offload: window too short or not chosen; pairing: left apart (would deadlock).
  std::int64_t rejected = 0;
  std::int32_t prefetch = 0;  // offload only
  /// Recompute inside the backward (every policy but granularity stage, which lists R ops):
  /// counts are backwards that recompute, bytes what F no longer keeps; the most units one
  /// backward rebuilds and the largest unit it holds while it runs.
  bool in_backward = false;
  std::int64_t units = 0;
  Bytes unit;

  bool is_memory_pass() const { return kind != PassKind::A2aPairing; }
  /// "offload pass (full): 12 of 24 activations on stages [0, 1], 12GiB moved" for reports;
  /// inside B "recompute (full, per unit inside B): 8 of 8 backwards on stages [0, 1] redo 10
  /// units each, 12GiB not stored, one unit of 1GiB held while each runs".
  std::string summary() const;
};

}  // namespace bubblesim
