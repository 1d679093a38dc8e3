#include "sim/engine/op_graph.h"

#include "schedules/list_scheduling.h"

namespace bubblesim {

OpGraph::OpGraph(const OpIndex& index, const std::vector<StageCost>& stage_costs)
    : index_(index), stage_costs_(stage_costs) {
  const Table& table = index.table();
  const auto devices = static_cast<std::size_t>(table.devices);
  const std::uint32_t total = index.size();
  nodes_.resize(total);
  stream_ops_.assign(devices * kStreams, {});
  for (std::int32_t d = 0; d < table.devices; ++d) {
    for (std::uint32_t i = index.device_begin(d); i < index.device_end(d); ++i) {
      Node& n = nodes_[i];
      const Op& op = index.op(d, i);
      n.device = d;
      n.position = static_cast<std::int32_t>(i - index.device_begin(d));
      n.stream = static_cast<std::uint8_t>(stream_of(op.kind));
      if (n.stream != 0) ++copies_;
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward) {
        if (index.has(OpKind::Recompute, op.stage, op.microbatch)) n.flags |= kForwardRecomputed;
      }
      if (op.kind == OpKind::Backward || op.kind == OpKind::ForwardBackward) {
        const bool fused = op.kind == OpKind::ForwardBackward;
        const std::int32_t s = fused ? op.backward_stage : op.stage;
        const std::int32_t j = fused ? op.backward_microbatch : op.microbatch;
        if (index.has(OpKind::Weight, s, j)) n.flags |= kBackwardSplit;
        if (index.has(OpKind::Recompute, s, j)) n.flags |= kBackwardRecomputed;
      }
      stream_ops_[static_cast<std::size_t>(d) * kStreams + n.stream].push_back(i);
    }
  }
  // Outgoing edges by a counting sort in two passes over the dependencies (count, then fill),
  // which keeps each producer's edges in consumer order and needs no per-node lists.
  edge_offset_.assign(static_cast<std::size_t>(total) + 1, 0);
  for_each_dependency([&](std::uint32_t from, const Edge& e) {
    ++edge_offset_[from + 1];
    ++nodes_[e.target].dependencies;
  });
  // A copy op (O, L) starts no earlier than the compute op listed before it on its device.
  for (std::int32_t d = 0; d < table.devices; ++d) {
    bool seen_compute = false;
    for (std::uint32_t n = device_begin(d); n < device_end(d); ++n) {
      if (nodes_[n].stream == 0)
        seen_compute = true;
      else if (seen_compute)
        ++nodes_[n].dependencies;
    }
  }
  for (std::uint32_t n = 0; n < total; ++n) edge_offset_[n + 1] += edge_offset_[n];
  edges_.resize(edge_offset_[total]);
  std::vector<std::uint32_t> fill(edge_offset_.begin(), edge_offset_.end() - 1);
  for_each_dependency([&](std::uint32_t from, const Edge& e) { edges_[fill[from]++] = e; });
}

template <typename Sink>
void OpGraph::for_each_dependency(Sink&& sink) const {
  using list_scheduling::DependencyKind;
  const std::int32_t stages = index_.table().stages;
  for (std::uint32_t n = 0; n < static_cast<std::uint32_t>(nodes_.size()); ++n) {
    list_scheduling::for_each_producer(
        op(n), stages, [&](OpKind kind, std::int32_t s, std::int32_t j, DependencyKind dep) {
          const std::uint32_t from = index_.find(kind, s, j);
          if (from == OpIndex::kNone) return;  // absent
          if (dep == DependencyKind::Local || nodes_[from].device == nodes_[n].device) {
            sink(from, Edge{n, EdgeKind::Local, Bytes::zero()});
            return;
          }
          const EdgeKind kind_of = dep == DependencyKind::Activation ? EdgeKind::ForwardActivation
                                                                     : EdgeKind::BackwardGradient;
          sink(from, Edge{n, kind_of, cost(list_scheduling::transfer_stage(dep, s)).p2p});
        });
  }
}

}  // namespace bubblesim
