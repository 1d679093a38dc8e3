#pragma once
// NCCL's view of a communicator's nodes and the channel graphs its topology search finds there
// (NVIDIA/nccl src/graph/search.cc, ncclTopoCompute): the inputs of the tuning model
// (nccl_tuning.h), read off a bubblesim topology (docs/parallelism.md, "NCCL's algorithms").
//
// NCCL's search walks the node's PCIe and NVLink tree trying channel after channel at the speeds
// of its speed arrays, fastest first, each channel taking that speed off every link it crosses.
// bubblesim evaluates the same budget in closed form for the node shape its topologies describe
// (GPUs on an NVSwitch or a PCIe tree, each reaching its NIC over PCIe): at speed s a ring or tree
// gets floor(NIC rate / s) channels per NIC, no more than the GPU-to-NIC paths and the GPUs'
// NVLinks carry, and NVLS one channel per head GPU while every GPU's NVLink carries (heads + 1)
// x s. The speed passes, the early stop once the channels reach the GPU's bandwidth, the channel
// duplication and the second pass that raises the speeds follow search.cc line by line.

#include <cstdint>
#include <vector>

#include "topologies/nccl/nccl_tuning.h"
#include "topologies/topology.h"

namespace bubblesim::nccl {

/// One node of a communicator as NCCL's topology detection sees it, in NCCL's own bandwidth
/// units (GB/s, one direction; nccl_constants.h converts the datasheet rates).
struct NodeView {
  std::int32_t gpus = 1;  // the communicator's GPUs on the node
  double nvlink_bw = 0;   // one GPU's NVLinks to the others (0: none)
  bool nvswitch = false;  // the GPUs meet on an NVSwitch
  double pci_bw = 0;      // one GPU's PCIe link
  bool nic_pxn = true;    // every GPU reaches its NIC without crossing the host (PIX/PXB/PXN)
  struct Nic {
    double net_bw = 0;      // the port's rate
    double path_bw = 0;     // the GPU-to-NIC path (its slowest link)
    std::int32_t gpus = 1;  // the communicator's GPUs that use it
    bool sharp = false;     // its switch reduces in the network (CollNet)
  };
  std::vector<Nic> nics;  // the NICs the node's GPUs use, each once
};

/// The communicator NCCL builds over `ranks` GPUs on `nodes` nodes shaped like `node` (NCCL takes
/// the least over its nodes: pass the slowest), with the graphs of ring, tree, NVLS and CollNet.
Comm communicator(const NodeView& node, Arch arch, std::int32_t ranks, std::int32_t nodes);

/// Reads NodeViews off a topology (the GPUs' links to NVSwitches and PCIe switches, their NICs and
/// the NICs' ports). Built once per topology: it indexes the links by vertex.
class NodeReader {
 public:
  /// `nic_scale`: the factor the topology's NIC links were scaled by (first_principles.nccl's
  /// net_efficiency, Topology::scale_bandwidth); NCCL sees the line rates, so it is undone.
  NodeReader(const Topology& topology, Arch arch, double nic_scale = 1.0);
  /// The view of one node's GPUs of a communicator (`gpus` non-empty, all on one node).
  NodeView read(const std::vector<VertexId>& gpus) const;
  /// The slowest of `views` in every field (what NCCL's all-gather of the ranks' graphs keeps).
  static NodeView slowest(const std::vector<NodeView>& views);

 private:
  double link_bw(LinkId l) const;  // in NCCL's units (PCIe counted at NCCL's share)
  double raw_bw(LinkId l) const;   // GB/s, the NIC links at their line rate
  const Topology* topology_;
  Arch arch_;
  double nic_scale_;
  std::vector<std::vector<LinkId>> out_;  // directed links by source vertex
};

}  // namespace bubblesim::nccl
