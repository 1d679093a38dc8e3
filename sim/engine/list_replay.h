#pragma once
// ListReplay: the replay without an event queue, for tables where no two transfers can compete
// (NetworkModel::contention_free). Then an op's start is fixed by its dependencies alone:
// start = max(its device's previous end, the latest arrival of its inputs), and every arrival
// is known when its producer ends. One pass over the per-device orders in dependency order
// (list scheduling) computes exactly what the event loop computes: the same starts and ends,
// the same memory sequence per device (allocations and releases in stream order) and the same
// exposed communication. `events` is what the event loop would count without links (one end per
// op, one arrival per transfer in flight); over a FlowNetwork it leaves out the flow-completion
// checks the event loop also counts.
//
// How: the list-scheduling kernel (schedules/list_scheduling.h) over one end-time array per op
// kind indexed by (stage, microbatch): each device's next op pulls its producers' end times; a
// device whose next op waits for an input that has not run is parked, and woken when an op whose
// output it may need (the activation or the gradient edge) ends. No graph, no edge lists, no event
// queue: per op, the end-time entry and its timing.
//
// It handles compute ops only, no observer, no gradient sync, no blocking send: the engine uses
// it when the table has no copies, nothing watches and the network is contention-free, and falls
// back to the event loop when run() returns false: an op could not run (a deadlock, which the event
// loop names) or memory went over a budget (the event loop orders the out-of-memory records).

#include <array>
#include <vector>

#include "sim/engine/device_memory.h"
#include "sim/engine/duration_model.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/metrics.h"
#include "sim/engine/network/network_model.h"

namespace bubblesim {

/// Arrays a list replay reuses from the previous one (no allocation, no fresh pages): one per
/// thread of replays, passed in EngineInput::scratch (a run's idealized and simulated replays).
class ReplayScratch {
  friend class ListReplay;
  std::array<std::vector<std::int64_t>, 6> end_of_;  // per op kind, by (stage, microbatch)
};

class ListReplay {
 public:
  /// `durations`: per node (device-major), or null for the stage costs (with
  /// in.compute_slowdown, as CostDurations). `table` is in.table.
  /// `device_start`: per device, when its first op may start (a later iteration); empty = 0.
  ListReplay(const Table& table, const EngineInput& in, const std::vector<Time>* durations,
             NetworkModel& network, std::vector<Time> device_start = {});
  /// Fills `timings` (shaped like the table). False: fall back to the event loop.
  bool run(OpTimings& timings);

  const std::vector<DeviceMemory>& memory() const { return memory_; }
  const std::vector<Time>& exposed_comm() const { return exposed_comm_; }
  const std::vector<DeviceTimes>& device_times() const { return device_times_; }
  std::uint64_t events() const { return events_; }

 private:
  const Table& table_;
  const EngineInput& in_;
  const std::vector<Time>* durations_;
  NetworkModel& network_;
  std::vector<Time> device_start_;
  std::vector<DeviceMemory> memory_;
  std::vector<Time> exposed_comm_;
  std::vector<DeviceTimes> device_times_;
  std::uint64_t events_ = 0;
};

}  // namespace bubblesim
