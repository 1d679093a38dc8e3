#include "sim/report/html_iteration_tail.h"

#include <algorithm>

#include "sim/engine/metrics.h"
#include "sim/report/html_time.h"

namespace bubblesim {

nlohmann::json iteration_tails(const ScheduleRun& run) {
  nlohmann::json tails = nlohmann::json::array();
  const SyncMetrics& sync = run.simulation.metrics.sync;
  if (!sync.enabled) return tails;
  const std::vector<DeviceTimes> devices = device_times(run.table, run.simulation.timings);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (d >= sync.sync_end_per_device.size() || d >= sync.optimizer_end_per_device.size()) break;
    const Time last = devices[d].last;
    const Time sync_end = std::max(last, sync.sync_end_per_device[d]);
    const Time step_end = std::max(sync_end, sync.optimizer_end_per_device[d]);
    if (step_end > last) tails.push_back({d, html_us(last), html_us(sync_end), html_us(step_end)});
  }
  return tails;
}

}  // namespace bubblesim
