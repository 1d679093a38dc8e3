#include "sim/report/html_iteration_tail.h"

#include <algorithm>

#include "sim/engine/metrics.h"

namespace bubblesim {
namespace {

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

}  // namespace

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
    if (step_end > last) tails.push_back({d, us(last), us(sync_end), us(step_end)});
  }
  return tails;
}

}  // namespace bubblesim
