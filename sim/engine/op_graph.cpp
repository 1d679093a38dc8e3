#include "sim/engine/op_graph.h"

namespace bubblesim {

OpGraph::OpGraph(const Table& table, const std::vector<StageCost>& stage_costs)
    : table_(&table), index_(table), stage_costs_(stage_costs) {
  const auto devices = static_cast<std::size_t>(table.devices);
  device_offset_.resize(devices + 1);
  std::uint32_t total = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    device_offset_[d] = total;
    total += static_cast<std::uint32_t>(table.device_ops[d].size());
  }
  device_offset_[devices] = total;
  nodes_.resize(total);
  stream_ops_.assign(devices * kStreams, {});
  for (std::size_t d = 0; d < devices; ++d) {
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      Node& n = nodes_[device_offset_[d] + i];
      const Op& op = table.device_ops[d][i];
      n.op = &op;
      n.device = static_cast<std::int32_t>(d);
      n.position = static_cast<std::int32_t>(i);
      n.stream = static_cast<std::uint8_t>(stream_of(op.kind));
      if (n.stream != 0) ++copies_;
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward) {
        if (index_.find(OpKind::Recompute, op.stage, op.microbatch).present())
          n.flags |= kForwardRecomputed;
      }
      if (op.kind == OpKind::Backward || op.kind == OpKind::ForwardBackward) {
        const bool fused = op.kind == OpKind::ForwardBackward;
        const std::int32_t s = fused ? op.backward_stage : op.stage;
        const std::int32_t j = fused ? op.backward_microbatch : op.microbatch;
        if (index_.has_weight(s, j)) n.flags |= kBackwardSplit;
        if (index_.find(OpKind::Recompute, s, j).present()) n.flags |= kBackwardRecomputed;
      }
      stream_ops_[d * kStreams + n.stream].push_back(device_offset_[d] +
                                                     static_cast<std::uint32_t>(i));
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
  for (std::size_t d = 0; d < devices; ++d) {
    bool seen_compute = false;
    for (std::uint32_t n = device_offset_[d]; n < device_offset_[d + 1]; ++n) {
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
  for (std::uint32_t n = 0; n < static_cast<std::uint32_t>(nodes_.size()); ++n) {
    const Op& op = *nodes_[n].op;
    if (op.kind == OpKind::ForwardBackward) {
      add_dependencies(n, OpKind::Forward, op.stage, op.microbatch, sink);
      add_dependencies(n, OpKind::Backward, op.backward_stage, op.backward_microbatch, sink);
    } else {
      add_dependencies(n, op.kind, op.stage, op.microbatch, sink);
    }
  }
}

template <typename Sink>
void OpGraph::add_dependencies(std::uint32_t n, OpKind kind, std::int32_t s, std::int32_t j,
                               Sink& sink) const {
  auto depend = [&](OpKind pred_kind, std::int32_t ps, std::int32_t pj, EdgeKind edge_kind,
                    Bytes bytes) {
    OpLocation loc = index_.find(pred_kind, ps, pj);
    if (!loc.present()) return;
    std::uint32_t from = node_at(loc);
    if (from == n) return;  // the other half of the same fused op
    if (nodes_[from].device == nodes_[n].device) edge_kind = EdgeKind::Local;
    sink(from, Edge{n, edge_kind, edge_kind == EdgeKind::Local ? Bytes::zero() : bytes});
  };
  const std::int32_t last = table_->stages - 1;
  switch (kind) {
    case OpKind::Forward:
      if (s > 0) depend(OpKind::Forward, s - 1, j, EdgeKind::ForwardActivation, cost(s - 1).p2p);
      break;
    case OpKind::Backward:
      depend(OpKind::Forward, s, j, EdgeKind::Local, Bytes::zero());
      if (s < last) depend(OpKind::Backward, s + 1, j, EdgeKind::BackwardGradient, cost(s).p2p);
      depend(OpKind::Recompute, s, j, EdgeKind::Local, Bytes::zero());
      depend(OpKind::Reload, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::Weight:
    case OpKind::Recompute:
    case OpKind::Offload:
      depend(kind == OpKind::Weight ? OpKind::Backward : OpKind::Forward, s, j, EdgeKind::Local,
             Bytes::zero());
      break;
    case OpKind::Reload:
      depend(OpKind::Offload, s, j, EdgeKind::Local, Bytes::zero());
      break;
    case OpKind::ForwardBackward:
      break;  // expanded by the caller
  }
}

}  // namespace bubblesim
