#pragma once
// EndWindow: the end times of one op kind on one stage (the streamed replay, stream_replay.h),
// kept only for the microbatches whose consumers have not all run. Entries are produced in
// increasing microbatch order (the stream's premise); a ring from the oldest entry still needed
// holds them, grows when a producer runs further ahead than it holds, and drops its front entries
// once their last consumer ran. Private to sim/engine.

#include <cassert>
#include <cstdint>
#include <vector>

namespace bubblesim {

class EndWindow {
 public:
  static constexpr std::int64_t kPending = -1;  // not run yet

  /// The end of microbatch j, or kPending when its op has not run.
  std::int64_t end(std::int64_t j) const {
    assert(j >= base_);
    const auto offset = static_cast<std::uint64_t>(j - base_);
    return offset < ring_.size() ? ring_[slot(j)].end : kPending;
  }
  /// Microbatch j's op ended at `end`; `consumers` ops will read it (none: nothing is kept).
  void put(std::int64_t j, std::int64_t end, std::int32_t consumers) {
    if (consumers == 0) return;
    while (static_cast<std::uint64_t>(j - base_) >= ring_.size()) grow();
    ring_[slot(j)] = Entry{end, consumers};
  }
  /// One consumer of microbatch j ran; drops the front entries no one needs any more.
  void consumed(std::int64_t j) {
    --ring_[slot(j)].left;
    while (!ring_.empty() && ring_[slot(base_)].end != kPending && ring_[slot(base_)].left == 0) {
      ring_[slot(base_)] = Entry{};
      ++base_;
    }
  }
  /// Entries held now (for the peak a benchmark reports).
  std::size_t capacity() const { return ring_.size(); }

 private:
  struct Entry {
    std::int64_t end = kPending;
    std::int32_t left = 0;
  };
  std::size_t slot(std::int64_t j) const {
    return static_cast<std::size_t>(j) & (ring_.size() - 1);
  }
  void grow() {
    std::vector<Entry> bigger(ring_.empty() ? 16 : 2 * ring_.size());
    for (std::size_t k = 0; k < ring_.size(); ++k) {
      const std::int64_t j = base_ + static_cast<std::int64_t>(k);
      bigger[static_cast<std::size_t>(j) & (bigger.size() - 1)] = ring_[slot(j)];
    }
    ring_ = std::move(bigger);
  }
  std::vector<Entry> ring_;  // power-of-two size; microbatch j at j mod size
  std::int64_t base_ = 0;    // oldest microbatch still held
};

}  // namespace bubblesim
