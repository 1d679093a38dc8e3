#pragma once
// MemoryTimeline: an EngineObserver that records each device's memory as a step function of time,
// for the Chrome trace's counters and the HTML report's memory plots. One sample per change the
// engine reports, in event order (several samples may share a time: the last one is the level
// that holds afterwards). A device's series starts at time 0 with no activations and its static
// memory (the engine reports static memory only with the first change, so it is inferred then).

#include <cstdint>
#include <vector>

#include "sim/engine/observer.h"

namespace bubblesim {

struct MemorySample {
  Time time;
  Bytes activation;  // resident activation bytes
  Bytes total;       // activation plus static memory
};

class MemoryTimeline : public EngineObserver {
 public:
  /// `devices` series to start with; a device beyond them adds its series when it reports.
  explicit MemoryTimeline(std::int32_t devices = 0) : series_(static_cast<std::size_t>(devices)) {}

  void on_memory(std::int32_t device, Time time, Bytes activation, Bytes total) override;

  std::int32_t devices() const { return static_cast<std::int32_t>(series_.size()); }
  /// Samples of one device in time order; empty when its memory never changed.
  const std::vector<MemorySample>& samples(std::int32_t device) const {
    return series_[static_cast<std::size_t>(device)];
  }
  /// Largest total (activation + static) over the run on one device; zero when it never changed.
  Bytes peak_total(std::int32_t device) const;

 private:
  std::vector<std::vector<MemorySample>> series_;
};

}  // namespace bubblesim
