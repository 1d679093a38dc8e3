#pragma once
// OpGraph: what the event loop replays. The nodes of an OpIndex (one per table op, device-major),
// the dependency edges between them (outgoing, in CSR form; the producer walk of
// schedules/list_scheduling.h) and, per device, the nodes of each stream in table order. It holds
// no time: durations come from a DurationModel and every replay keeps its own state, so one graph
// serves several replays. A copy (O, L) also waits for the start of the compute op listed before it
// on its device (the table position of a reload is its prefetch point).

#include <cstdint>
#include <span>
#include <vector>

#include "schedules/op.h"
#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/op_index.h"
#include "sim/units/bytes.h"

namespace bubblesim {

enum class EdgeKind : std::uint8_t { Local, ForwardActivation, BackwardGradient };

struct Edge {
  std::uint32_t target;
  EdgeKind kind;  // Local when both ends are on one device
  Bytes bytes;    // what crosses the network (zero for Local)
};

class OpGraph {
 public:
  /// Streams per device, in Stream order: compute, device-to-host copy, host-to-device copy.
  static constexpr int kStreams = 3;
  // Per-node facts looked up once instead of in the TableIndex on every start / finish.
  static constexpr std::uint8_t kForwardRecomputed = 1;   // F, F&B: an R exists for the forward
  static constexpr std::uint8_t kBackwardSplit = 2;       // B, F&B: a W exists for the backward
  static constexpr std::uint8_t kBackwardRecomputed = 4;  // B, F&B: an R exists for the backward

  /// `index` and `stage_costs` (one entry per stage) must outlive the graph.
  OpGraph(const OpIndex& index, const std::vector<StageCost>& stage_costs);

  const Table& table() const { return index_.table(); }
  const OpIndex& index() const { return index_; }
  const StageCost& cost(std::int32_t stage) const {
    return stage_costs_[static_cast<std::size_t>(stage)];
  }
  const std::vector<StageCost>& stage_costs() const { return stage_costs_; }
  std::int32_t devices() const { return index_.devices(); }
  std::uint32_t size() const { return static_cast<std::uint32_t>(nodes_.size()); }
  bool has_copies() const { return copies_ > 0; }

  const Op& op(std::uint32_t n) const { return index_.op(nodes_[n].device, n); }
  std::int32_t device(std::uint32_t n) const { return nodes_[n].device; }
  std::int32_t position(std::uint32_t n) const { return nodes_[n].position; }
  std::uint8_t stream(std::uint32_t n) const { return nodes_[n].stream; }
  bool has(std::uint32_t n, std::uint8_t flag) const { return (nodes_[n].flags & flag) != 0; }
  /// Dependencies node n waits for before it can start (edges in, plus the prefetch point).
  std::int32_t dependencies(std::uint32_t n) const { return nodes_[n].dependencies; }
  std::span<const Edge> edges(std::uint32_t n) const {
    return {edges_.data() + edge_offset_[n], edges_.data() + edge_offset_[n + 1]};
  }
  /// The nodes of a device: [device_begin, device_end).
  std::uint32_t device_begin(std::int32_t d) const { return index_.device_begin(d); }
  std::uint32_t device_end(std::int32_t d) const { return index_.device_end(d); }
  /// Stream slots: device * kStreams + stream, each with its nodes in table order.
  std::size_t stream_slots() const { return stream_ops_.size(); }
  static std::size_t slot(std::int32_t device, std::uint8_t stream) {
    return static_cast<std::size_t>(device) * kStreams + stream;
  }
  const std::vector<std::uint32_t>& stream_ops(std::size_t slot) const { return stream_ops_[slot]; }

 private:
  struct Node {
    std::int32_t device = 0;
    std::int32_t position = 0;
    std::int32_t dependencies = 0;
    std::uint8_t stream = 0;
    std::uint8_t flags = 0;
  };
  template <typename Sink>
  void for_each_dependency(Sink&& sink) const;

  const OpIndex& index_;
  const std::vector<StageCost>& stage_costs_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> edge_offset_;  // CSR: node n's edges are [offset[n], offset[n+1])
  std::vector<Edge> edges_;
  std::vector<std::uint32_t> device_offset_;            // first node of each device, then the end
  std::vector<std::vector<std::uint32_t>> stream_ops_;  // [slot] -> nodes in table order
  std::size_t copies_ = 0;
};

}  // namespace bubblesim
