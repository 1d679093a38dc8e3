#pragma once
// Blocking sends (communication.p2p: blocking, docs/iterations.md): their key, which the host gaps
// read too, and the record the behaviour leaves in Metrics::components.

#include <string_view>
#include <vector>

#include "schedules/parameter.h"
#include "sim/engine/metric_row.h"
#include "sim/engine/simulation_result.h"
#include "sim/units/time.h"

namespace bubblesim {

/// The key blocking sends declare (async or blocking).
inline constexpr std::string_view kP2pKey = "communication.p2p";
/// Whether `settings` make sends block their sender (what engages blocking sends and host gaps).
bool p2p_blocking(const ParamValues& settings);

/// The report section of blocking point-to-point, after the expert all-to-all's; the host gaps
/// fill it too.
inline constexpr ResultSection kP2pSection{
    "p2p", "Blocking point-to-point (the device with the most)", "all-to-all"};

/// Per device, how long its compute stream was held after its ops by their sends in flight.
struct BlockedSends {
  std::vector<Time> per_device;
};

/// The record of `metrics`, or null when the replay had no blocking sends.
inline const BlockedSends* blocked_sends(const Metrics& metrics) {
  return metrics.components.find<BlockedSends>();
}

}  // namespace bubblesim
