#pragma once
// ChromeTraceWriter: an EngineObserver that records one simulation replay (op starts and ends,
// transfers, device memory) and serialises it as Chrome trace JSON, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Layout:
//   processes  one per GPU ("GPU d", pid d+1); one "host" process when the table offloads
//              (O/L copies), with an offloaded-activation counter per GPU; one "network" process
//              under the topology model, with one thread per link direction that carried data.
//   threads    per GPU: compute, D2H, H2D (when used) and "send" (outgoing transfers). A resource
//              whose slices overlap in time (several transfers in flight on one link) gets extra
//              lanes, "send #2", ..., so that complete ("X") events never overlap within a thread.
//              A "phases" thread shows phases inside ops: a MoE op's routed experts, and one
//              "recompute unit k/N" slice per unit of a backward that recomputes per unit.
//   events     metadata first (process_name, process_sort_index, thread_name, thread_sort_index,
//              by pid then tid), then X slices by (pid, tid, start), then memory counters ("C",
//              per GPU: activation and total bytes), then flows ("s" on the send slice, "f" with
//              bind point "e" on the consumer op's slice), by transfer id.
// A bound on the events (--trace-max-events) keeps the replay's first events in time and says so in
// otherData.truncated {events_kept, events_dropped, from_us}.
// Timestamps are microseconds written exactly from integer picoseconds ("18522.5"), so the same
// replay always gives byte-identical output.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schedules/op.h"
#include "schedules/stage_costs.h"
#include "sim/engine/memory_timeline.h"
#include "sim/engine/observer.h"
#include "topologies/topology.h"

namespace bubblesim {

/// What the serialiser needs besides the recorded events.
struct TraceContext {
  std::string label;  // schedule label, written into otherData
  std::int32_t devices = 0;
  const Topology* topology = nullptr;   // topology model only: link threads
  std::vector<VertexId> device_vertex;  // topology model only: device -> GPU vertex
  /// The replayed table's stage costs: backwards that recompute per unit get a phase per unit.
  const std::vector<StageCost>* stage_costs = nullptr;
};

/// Exact decimal microseconds of an integer picosecond count, shortest form ("0", "1.5", "-2").
std::string format_microseconds(std::int64_t ps);

/// The trace file of one schedule when a run writes several: `label` made file-name safe (every
/// character other than A-Z a-z 0-9 . _ - becomes '_', trailing '_' dropped) inserted before the
/// extension: ("out/trace.json", "interleaved-1f1b(chunks=2)") ->
/// "out/trace.interleaved-1f1b_chunks_2.json". Without an extension the label is appended after a
/// '.'.
std::string trace_file_for_schedule(const std::string& file, const std::string& label);

/// Several schedules' traces (label, to_json text) as one trace: each schedule's processes keep
/// their order, get pids after the previous schedule's and names prefixed with the label
/// ("1f1b: GPU 0"), and flow ids are renumbered so they stay unique. otherData.schedules lists
/// the labels.
std::string combine_traces(const std::vector<std::pair<std::string, std::string>>& traces);

/// What a bounded trace left out: the ops, transfers, holds and collectives that started after
/// `cut` and some of those starting at it (the first event left out starts at `cut`), and the
/// memory samples after it.
struct TraceTruncation {
  std::size_t kept = 0;     // events recorded
  std::size_t dropped = 0;  // events seen after the bound was reached
  Time cut;                 // the start time of the first dropped event
};

class ChromeTraceWriter : public EngineObserver {
 public:
  /// `max_events`: record at most that many ops, transfers, holds and collectives (0: no bound);
  /// the replay's first events in time, so memory stays bounded for any run.
  explicit ChromeTraceWriter(std::int32_t devices, std::size_t max_events = 0)
      : memory_(devices), max_events_(max_events) {}

  void on_op_start(const OpEvent& e) override;
  void on_op_end(const OpEvent& e) override;
  void on_transfer_start(const TransferEvent& e) override;
  void on_transfer_end(const TransferEvent& e) override;
  void on_memory(std::int32_t device, Time time, Bytes activation, Bytes total) override;
  /// Gradient sync, TP all-reduces and optimizer steps: a "sync" thread per GPU, and their flows
  /// on the network process's link threads (docs/parallelism.md).
  void on_collective(const CollectiveEvent& e) override;
  /// Blocking p2p holds: a "send F3.12 (blocking)" slice on the GPU's compute thread.
  void on_send_hold(const HoldEvent& e) override;
  /// Phases inside ops (the routed experts of a MoE op): a "phases" thread per GPU.
  void on_phase(const PhaseEvent& e) override;

  const MemoryTimeline& memory() const { return memory_; }
  /// Set when the bound was reached: what was left out.
  const std::optional<TraceTruncation>& truncation() const { return truncation_; }

  /// The trace as JSON text (one event per line). Ops or transfers that never ended (deadlock)
  /// are left out.
  std::string to_json(const TraceContext& context) const;

 private:
  struct OpRecord {
    std::int32_t device;
    std::int32_t position;
    Op op;
    Time start;
    Time end;
    bool ended = false;
  };
  struct TransferRecord {
    std::uint32_t id;
    std::int32_t from, to;
    Bytes bytes;
    Op producer, consumer;
    Time start;
    Time end;
    bool ended = false;
  };
  std::vector<OpRecord> ops_;
  std::vector<TransferRecord> transfers_;
  std::vector<CollectiveEvent> collectives_;
  std::vector<PhaseEvent> phases_;
  struct HoldRecord {
    std::int32_t device, position;
    Op op;
    Time start, end;
    bool host_gap;
  };
  std::vector<HoldRecord> holds_;
  MemoryTimeline memory_;
  std::size_t max_events_ = 0;
  std::optional<TraceTruncation> truncation_;
  // Open ops by (device, position) and transfers by id: their records' indices.
  std::unordered_map<std::uint64_t, std::size_t> open_ops_, open_transfers_;

  /// False (and the event counted as dropped) once the bound is reached.
  bool admit(Time start);
};

}  // namespace bubblesim
