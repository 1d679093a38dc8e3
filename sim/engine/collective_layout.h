#pragma once
// Each collective algorithm as flows (docs/parallelism.md, "Channels" and "NCCL's algorithms"):
// which endpoint sends how many bytes to which, per step. The endpoints are the collective's ranks
// and, for NVLink SHARP, the nodes' NVSwitches.
//
//   ring   over the ranks grouped by node, in C channels, one per NIC the node's ranks use (NCCL's
//          rail-aligned rings): channel c enters every node at the GPU after cut c and leaves it
//          at the GPU of cut c, where the node's GPUs change NIC. Inside a node every channel runs
//          the same cycle of GPUs less its cut, so the C channels' flows on a cycle edge are one
//          flow of (C - cuts on it) / C of the bytes, and each cut is one flow of 1 / C to the next
//          node's next GPU: 2 flows per rank whatever C is (one channel: the plain ring).
//   tree   NCCL's double binary tree: inside a node the channels' chains (the cycle less the cut,
//          head after the cut) carry the bytes up (reduce) and down (broadcast); between nodes two
//          binary trees over the nodes (src/graph/trees.cc ncclGetDtree), each with half of every
//          channel's bytes, from each node's head of the channel to its parent's and back. All at
//          once, as NCCL pipelines them. A head's tree edges are one flow into the network (to
//          the first switch past its NIC) carrying what it sends on all of them, and one flow out
//          carrying what it receives: its NIC carries exactly its tree traffic, and the heads'
//          flows share no link, so a tree over 1024 nodes costs 2 flows per head, not a max-min
//          problem over every edge (the network beyond the first switch is taken as not
//          blocking the tree; rings keep their routes end to end).
//   nvls   NVLink SHARP inside one node: every GPU sends its buffer to the NVSwitch, which reduces
//          it and multicasts the result (all-reduce: S (L+1)/L each way per GPU).
//   nvls_tree  NVLS inside every node to one head per NIC, the heads' double binary trees between
//          nodes, NVLS back.
//   pat    NCCL's all-gather / reduce-scatter for one GPU per node: the ring's bytes per rank on
//          the ring's flows (on a non-blocking network the NICs carry the same); what sets it
//          apart, its latency of log2 n network steps, is NCCL's tuning model's.
//   collnet  NCCL's CollNet on a SHARP switch: each channel's chain inside the node (as the
//          tree's), its head sending S / C to the switch, which reduces across the nodes, and
//          getting the result back; NVLS across nodes (NVLS with CollNet): NVLS to the heads,
//          the heads to the switch and back.

#include <cstdint>
#include <vector>

#include "sim/engine/collectives.h"

namespace bubblesim {

/// ceil(log2 n): the levels of a binary tree over n.
std::int32_t ceil_log2(std::int32_t n);

/// Where a collective's ranks are: their nodes, NICs and NVSwitches (topology facts the layouts
/// read; -1 where none).
struct RankPlaces {
  std::vector<VertexId> ranks;
  std::vector<std::int32_t> node;  // node of each rank (node_of_gpus)
  std::vector<VertexId> nic;       // each rank's NIC, -1 when it has none
  std::vector<VertexId> nvswitch;  // the NVSwitch each rank's NVLinks meet on, -1 when none
  /// The network switch each rank's traffic to other nodes enters first (past its NIC), -1 when
  /// none; and the first one that reduces in the network (Topology::sharp), -1 when none.
  std::vector<VertexId> uplink, sharp;
};
/// The places of `ranks` on `topology`.
RankPlaces rank_places(const Topology& topology, const std::vector<VertexId>& ranks);

/// The ranks grouped by node (nodes in order of first appearance, each node's ranks in rank order)
/// and the channel cuts of a ring or tree over them.
struct NodeGroups {
  std::vector<std::vector<std::int32_t>> members;  // [node][local] -> rank index
  bool regular = false;                            // every node holds the same number of ranks
  /// Local positions j where a channel leaves a node (from local j to the next node's local j+1):
  /// where node 0's ranks change NIC, cyclically; {L - 1} when they all share one (or no) NIC or
  /// the layout asks for one channel.
  std::vector<std::int32_t> cuts;
  std::int32_t channels() const { return static_cast<std::int32_t>(cuts.size()); }
};
NodeGroups node_groups(const RankPlaces& places, CollectiveChannels channels);

/// A collective laid out as flows: `steps` over `endpoints` (the ranks first, then any switch).
struct CollectiveLayout {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  // what was laid out
  std::vector<VertexId> endpoints;
  std::vector<CollectiveStep> steps;
  std::int32_t channels = 1;
};

/// Lays out `kind` of `bytes` (S, the whole buffer per rank) with `algorithm` (not Auto). Flows
/// carry `latencies` route latencies after their last byte when `route_latency` (the topology's
/// latency model); none when NCCL's latency is added instead. Algorithms that cannot run this
/// collective here (nvls without NVSwitch, tree for reduce-scatter, ...) fall back to the ring.
CollectiveLayout lay_out(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                         const RankPlaces& places, const NodeGroups& groups, RingSteps ring,
                         bool route_latency);

}  // namespace bubblesim
