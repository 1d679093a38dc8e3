#pragma once
// NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime; src/enqueue.cc, topoGetAlgoInfo): for every collective, algorithm and
// protocol a latency (us) and a bandwidth (GB/s) from the communicator's channel graphs; a
// collective of S bytes is predicted at latency + S / bandwidth, and NCCL runs the algorithm and
// protocol whose prediction is the least. This is that model, term by term (docs/parallelism.md,
// "NCCL's algorithms"); nccl_graph.h derives its inputs from a topology.

#include <array>
#include <optional>
#include <string_view>

#include "topologies/collective_algorithm.h"
#include "topologies/nccl/nccl_constants.h"

namespace bubblesim::nccl {

/// NCCL's generation of a compute capability (70 = 7.0, 90 = 9.0, ...); nullopt before Volta.
std::optional<Arch> arch_of_compute_capability(int cc);
/// "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat".
std::string_view algo_name(Algo a);
/// "LL", "LL128", "Simple".
std::string_view proto_name(Proto p);

/// One algorithm's channels as NCCL's topology search leaves them (struct ncclTopoGraph): how many
/// channels and the bandwidth (GB/s) each carries inside the node and between nodes.
struct Graph {
  int channels = 0;  // 0: the pattern was not found (the algorithm does not run)
  double bw_intra = 0, bw_inter = 0;
  double latency_inter_us = 0;  // the NICs' own latency (0 for InfiniBand and RoCE)
  bool nvlink = true;           // the GPUs of a node reach each other over NVLink, else PCIe
  bool net_pxn = true;  // the GPUs reach their NICs within PXN (LL128 allowed between nodes)
};

/// What ncclTopoTuneModel reads from a communicator.
struct Comm {
  Arch arch = Arch::Hopper;
  int ranks = 1, nodes = 1;
  /// Indexed by Algo, as NCCL's graphs[] (NvlsTree shares the NVLS graph, Pat the tree's).
  std::array<Graph, kAlgos> graphs{};
  bool nvls = false;         // comm->nvlsSupport: NVLink SHARP on an NVSwitch, Hopper or later
  bool collnet = false;      // CollNet on a SHARP network (collnetEnable)
  bool nvswitch = false;     // ncclTopoGetNvsCount > 0
  bool simple_tree = false;  // comm->maxTreePattern is NCCL_TOPO_PATTERN_TREE (Hopper's fallback)
  int channels = 1;          // comm->nChannels: the ring's and tree's common channel count
};

/// NCCL's prediction for one algorithm and protocol.
struct Prediction {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  double latency_us = 0;  // what NCCL adds whatever the size (with the ring's plateau factor)
  double bandwidth = 0;   // GB/s of the buffer (NCCL's algorithm bandwidth, after corrections)
  double time_us = 0;     // latency + bytes / bandwidth
};

class Tuning {
 public:
  /// ncclTopoTuneModel: the latency and bandwidth tables of `comm`.
  explicit Tuning(const Comm& comm);

  /// ncclTopoGetAlgoTime for one collective of `bytes` (S: the whole buffer, NCCL's nBytes);
  /// nullopt where NCCL does not run that algorithm and protocol for this collective here.
  std::optional<Prediction> predict(CollectiveKind kind, Algo algo, Proto proto,
                                    double bytes) const;
  /// topoGetAlgoInfo: the fastest algorithm and protocol for `bytes`; with `only`, the fastest
  /// protocol of that algorithm (NCCL_ALGO forcing it). nullopt when none runs.
  std::optional<Prediction> choose(CollectiveKind kind, double bytes,
                                   std::optional<Algo> only = std::nullopt) const;
  const Comm& comm() const { return comm_; }

 private:
  Comm comm_;
  // [kind][algo][proto]; a bandwidth of 0 means "does not run".
  std::array<AlgoProto, 3> latency_{}, bandwidth_{};
};

}  // namespace bubblesim::nccl
