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
// How: each device's head op pulls its producers' end times through the OpIndex; a head whose
// producer has not run parks its device, and the device is woken when an op whose output it
// may need (the activation or gradient edge of dependencies.h) ends. No graph, no edge lists,
// no per-op state besides the timings themselves.
//
// It handles compute ops only, no observer, no gradient sync, no blocking send: the engine uses it
// when the table has no copies, nothing watches and the network is contention-free, and falls back
// to the event loop when run() returns false: an op could not run (a deadlock, which the event loop
// names) or memory went over a budget (the event loop orders the out-of-memory records).

#include <vector>

#include "sim/engine/device_memory.h"
#include "sim/engine/duration_model.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/network/network_model.h"
#include "sim/engine/op_index.h"

namespace bubblesim {

class ListReplay {
 public:
  /// `durations`: per node, or null for the stage costs (with in.compute_slowdown).
  /// `device_start`: per device, when its first op may start (a later iteration); empty = 0.
  ListReplay(const OpIndex& index, const EngineInput& in, const std::vector<Time>* durations,
             NetworkModel& network, std::vector<Time> device_start = {});
  /// Fills `timings` (shaped like the table). False: fall back to the event loop.
  bool run(OpTimings& timings);

  const std::vector<DeviceMemory>& memory() const { return memory_; }
  const std::vector<Time>& exposed_comm() const { return exposed_comm_; }
  std::uint64_t events() const { return events_; }

 private:
  const OpIndex& index_;
  const EngineInput& in_;
  const std::vector<Time>* durations_;
  CostDurations cost_durations_;
  NetworkModel& network_;
  std::vector<Time> device_start_;
  std::vector<DeviceMemory> memory_;
  std::vector<Time> exposed_comm_;
  std::uint64_t events_ = 0;
};

}  // namespace bubblesim
