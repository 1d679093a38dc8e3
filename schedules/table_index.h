#pragma once
// TableIndex: where each (kind, stage, microbatch) sits in a table. A fused F&B op is indexed
// under both of its halves (F and B). Shared by the validator, the engine and the exporters.

#include <cstdint>
#include <vector>

#include "schedules/table.h"

namespace bubblesim {

struct OpLocation {
  std::int32_t device = -1;
  std::int32_t position = -1;  // index in table.device_ops[device]
  bool present() const { return device >= 0; }
};

class TableIndex {
 public:
  /// Indexes `table`. Out-of-range stages or microbatches are skipped (the validator reports them);
  /// duplicates keep the first occurrence and are counted.
  explicit TableIndex(const Table& table);

  /// Location of the op of `kind` (F, B, W, R, O, L) for (stage, microbatch); B includes the
  /// backward half of a fused op and F its forward half.
  OpLocation find(OpKind kind, std::int32_t stage, std::int32_t microbatch) const {
    return slots_[slot(kind, stage, microbatch)];
  }
  int count(OpKind kind, std::int32_t stage, std::int32_t microbatch) const {
    return counts_[slot(kind, stage, microbatch)];
  }
  bool has_weight(std::int32_t stage, std::int32_t microbatch) const {
    return find(OpKind::Weight, stage, microbatch).present();
  }

 private:
  static constexpr int kIndexedKinds = 6;  // F B W R O L
  std::size_t slot(OpKind kind, std::int32_t stage, std::int32_t microbatch) const {
    return (static_cast<std::size_t>(stage) * static_cast<std::size_t>(microbatches_) +
            static_cast<std::size_t>(microbatch)) *
               kIndexedKinds +
           static_cast<std::size_t>(kind);
  }
  std::int32_t stages_ = 0, microbatches_ = 0;
  std::vector<OpLocation> slots_;
  std::vector<std::uint8_t> counts_;
};

}  // namespace bubblesim
