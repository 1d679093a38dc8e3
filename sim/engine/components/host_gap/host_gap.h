#pragma once
// Host gaps after blocking p2p calls (communication.p2p_sync_gap, docs/iterations.md): the record
// the behaviour leaves in Metrics::components.

#include <vector>

#include "sim/engine/simulation_result.h"
#include "sim/units/time.h"

namespace bubblesim {

/// Per device, how long its compute stream idled in host gaps after p2p calls.
struct HostGaps {
  std::vector<Time> per_device;
};

/// The record of `metrics`, or null when the replay had no host gap.
inline const HostGaps* host_gaps(const Metrics& metrics) {
  return metrics.components.find<HostGaps>();
}

}  // namespace bubblesim
