#include "sim/engine/device_memory.h"

namespace bubblesim {

MemoryPeaks peaks_of(const std::vector<DeviceMemory>& devices) {
  MemoryPeaks peaks;
  for (const DeviceMemory& m : devices) {
    peaks.activation.push_back(m.peak);
    peaks.activation_time.push_back(m.peak_time);
    peaks.total.push_back(m.total_peak);
    peaks.activation_count.push_back(m.unit_peak);
  }
  return peaks;
}

std::vector<DeviceMemory> devices_of(const Table& table, const std::vector<StageCost>& costs) {
  std::vector<DeviceMemory> out;
  const auto held = table.placement.stages_by_device(table.devices);
  for (std::int32_t d = 0; d < table.devices; ++d) {
    Bytes bytes;
    for (std::int32_t s : held[static_cast<std::size_t>(d)])
      bytes += costs[static_cast<std::size_t>(s)].static_memory;
    out.emplace_back(bytes);
  }
  return out;
}

}  // namespace bubblesim
