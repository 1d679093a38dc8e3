#include "sim/engine/memory_timeline.h"

#include <algorithm>
#include <stdexcept>

namespace bubblesim {

void MemoryTimeline::on_memory(std::int32_t device, Time time, Bytes activation, Bytes total) {
  if (device < 0) throw std::out_of_range("MemoryTimeline: negative device");
  if (static_cast<std::size_t>(device) >= series_.size())
    series_.resize(static_cast<std::size_t>(device) + 1);
  std::vector<MemorySample>& s = series_[static_cast<std::size_t>(device)];
  if (s.empty()) {
    // Before the first change (even one at time 0) only static memory was resident.
    s.push_back(MemorySample{Time::zero(), Bytes::zero(), total - activation});
  }
  s.push_back(MemorySample{time, activation, total});
}

Bytes MemoryTimeline::peak_total(std::int32_t device) const {
  Bytes peak;
  for (const MemorySample& m : samples(device)) peak = std::max(peak, m.total);
  return peak;
}

}  // namespace bubblesim
