#pragma once
// OpIndex: a validated table as the engine addresses it. Every op is a node numbered
// device-major (the ops of device 0 in table order, then device 1, ...; the order of
// SimulationResult::timings), and a compact per-(stage, microbatch) index gives the node of
// each (kind, stage, microbatch): 4 bytes per entry, and only for the kinds the table has (F
// and B always; W, R, O, L when present). A fused F&B is found under both of its halves.
// The per-(stage, microbatch) index is built on the first find() (the list replay, which reads
// no graph, never asks: a run's replays then hold 4 bytes per op less).

#include <array>
#include <cstdint>
#include <vector>

#include "schedules/table.h"

namespace bubblesim {

class OpIndex {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  /// `table` must be validated (each op once) and outlive the index.
  explicit OpIndex(const Table& table);

  const Table& table() const { return *table_; }
  std::int32_t devices() const { return table_->devices; }
  std::uint32_t size() const { return device_offset_.back(); }
  std::uint32_t device_begin(std::int32_t d) const {
    return device_offset_[static_cast<std::size_t>(d)];
  }
  std::uint32_t device_end(std::int32_t d) const {
    return device_offset_[static_cast<std::size_t>(d) + 1];
  }
  /// Ops per device, for OpTimings.
  std::vector<std::size_t> ops_per_device() const;
  const Op& op(std::int32_t device, std::uint32_t n) const {
    return table_->device_ops[static_cast<std::size_t>(device)][n - device_begin(device)];
  }

  /// The node of (kind, stage, microbatch) for F, B, W, R, O, L; kNone when the table has none.
  std::uint32_t find(OpKind kind, std::int32_t stage, std::int32_t microbatch) const {
    if (!slots_built_) build_slots();
    const auto& slots = slots_[static_cast<std::size_t>(kind)];
    return slots.empty() ? kNone : slots[slot(stage, microbatch)];
  }
  bool has(OpKind kind, std::int32_t stage, std::int32_t microbatch) const {
    return find(kind, stage, microbatch) != kNone;
  }
  /// Whether the table has any op of `kind` (F, B, W, R, O, L).
  bool any(OpKind kind) const { return present_[static_cast<std::size_t>(kind)]; }
  bool has_copies() const { return any(OpKind::Offload) || any(OpKind::Reload); }

 private:
  std::size_t slot(std::int32_t stage, std::int32_t microbatch) const {
    return static_cast<std::size_t>(stage) * microbatches_ + static_cast<std::size_t>(microbatch);
  }
  void build_slots() const;
  const Table* table_;
  std::size_t microbatches_;
  std::vector<std::uint32_t> device_offset_;  // first node of each device, then the end
  std::array<bool, 6> present_{};             // per kind F B W R O L
  mutable bool slots_built_ = false;
  mutable std::array<std::vector<std::uint32_t>, 6> slots_;  // per present kind, else empty
};

}  // namespace bubblesim
