#pragma once
// EngineObserver: trace writers, memory timelines and statistics subscribe to engine events
// instead of the engine growing flags. All callbacks default to doing nothing.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedules/op.h"
#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

struct OpEvent {
  std::int32_t device;
  std::int32_t position;  // index in the table's op list of that device
  const Op& op;
  Time time;  // start time for on_op_start, end time for on_op_end
};

struct TransferEvent {
  std::uint32_t id;  // unique per run, same for start and end
  std::int32_t from_device;
  std::int32_t to_device;
  Bytes bytes;
  Time time;  // send time for start, arrival time for end
  const Op& producer;
  const Op& consumer;
};

/// A gradient collective (DP, replica or TP all-reduce) or an optimizer step, reported once it
/// has ended (docs/parallelism.md).
struct CollectiveEvent {
  std::string name;     // "dp all-reduce stage 2 bucket 0", "optimizer step", ...
  std::int32_t device;  // the pipeline device it belongs to
  Time start;
  Time end;
  Bytes bytes;                             // per rank
  std::vector<std::int32_t> links;         // topology LinkIds that carried its flows
  std::vector<Time> link_start, link_end;  // parallel to links: one slice per step and link
};

/// A phase inside a compute op, for traces: the routed experts of a MoE op (docs/moe.md).
struct PhaseEvent {
  std::string name;     // "routed experts F3.7 (+1.200 ms: hottest expert's load)"
  std::int32_t device;  // the pipeline device
  Time start;
  Time end;
  std::string args;  // a JSON object's text
};

/// A compute stream held after an op until its sends arrived (communication.p2p: blocking), or,
/// with `host_gap`, idle in the host gap before an op after its p2p call
/// (communication.p2p_sync_gap).
struct HoldEvent {
  std::int32_t device;
  std::int32_t position;  // the op whose sends held the stream (host_gap: the op that waits)
  const Op& op;
  Time start;  // the op's end (host_gap: the p2p call's end)
  Time end;    // the last of its sends arrived (host_gap: the op's start)
  bool host_gap = false;
};

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void on_op_start(const OpEvent&) {}
  virtual void on_op_end(const OpEvent&) {}
  virtual void on_transfer_start(const TransferEvent&) {}
  virtual void on_transfer_end(const TransferEvent&) {}
  /// Device memory changed: `activation` resident activation bytes, `total` with static memory.
  virtual void on_collective(const CollectiveEvent&) {}
  virtual void on_send_hold(const HoldEvent&) {}
  virtual void on_phase(const PhaseEvent&) {}
  virtual void on_memory(std::int32_t /*device*/, Time /*time*/, Bytes /*activation*/,
                         Bytes /*total*/) {}
};

/// Tells every observer of a collective on `device` over [start, end) that names no bytes or
/// links (a barrier, an optimizer step, an exposed slice of a collective inside an op); an empty
/// interval tells nobody.
inline void report_collective(const std::vector<EngineObserver*>& observers, std::string name,
                              std::int32_t device, Time start, Time end) {
  if (observers.empty() || end <= start) return;
  CollectiveEvent e;
  e.name = std::move(name);
  e.device = device;
  e.start = start;
  e.end = end;
  for (EngineObserver* o : observers) o->on_collective(e);
}

}  // namespace bubblesim
