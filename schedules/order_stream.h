#pragma once
// OrderStream: a schedule's per-device orders produced on demand instead of held as a Table, for
// tables too large for memory (docs/engine.md, "Streamed replay"). A generator that can emit its
// orders this way registers Generator::stream; its table is then `materialize()` of the same
// stream, so the streamed and the in-memory orders are one code path.
//
// The premise of a stream (what the streamed replay relies on): every op is a forward or an
// unsplit backward, every (stage, microbatch) has exactly one F and one B, one replica, and on
// each stage the forwards and the backwards run in increasing microbatch order (so the replay can
// drop a microbatch's end times once its consumers ran). 1F1B and interleaved 1F1B are such orders.

#include <cstdint>
#include <span>

#include "schedules/op.h"
#include "schedules/table.h"

namespace bubblesim {

class OrderStream {
 public:
  /// `shape`: the table's devices, stages, chunks, microbatches and placement, no ops.
  explicit OrderStream(Table shape) : shape_(std::move(shape)) {}
  virtual ~OrderStream() = default;

  /// The table without its ops (device_ops: one empty list per device).
  const Table& shape() const { return shape_; }
  /// Ops in device `device`'s order: 2 x microbatches x its stages.
  virtual std::uint64_t count(std::int32_t device) const = 0;
  /// Writes ops [first, first + out.size()) of `device`'s order into `out` (fewer at the end of
  /// the order) and returns how many it wrote. Any position may be read, in any order.
  virtual std::size_t read(std::int32_t device, std::uint64_t first, std::span<Op> out) const = 0;

  /// Ops of every device.
  std::uint64_t op_count() const;
  /// The whole table (what Generator::generate returns for a streaming generator).
  Table materialize() const;

 private:
  Table shape_;
};

}  // namespace bubblesim
