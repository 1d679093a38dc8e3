#pragma once
// Builders for common cluster shapes, usable from code (tests, benchmarks) and from the YAML
// loader's `builder:` form. Every builder names vertices the same way:
//   single node:  gpu0..gpuN-1, nvswitch0, pcie0..pcieK-1, host0
//   multi-node:   the same per node with an "nI." prefix (n0.gpu0, n0.nvswitch0, n0.pcie0,
//   n0.host0),
//                 plus one NIC per GPU (n0.nic0, on the GPU's PCIe switch) and the network
//                 switches.
// Defaults describe a DGX-H100-like node (see scenarios/topologies/dgx-h100.yaml for sources).

#include <cstdint>

#include "sim/units/rates.h"
#include "sim/units/time.h"
#include "topologies/topology.h"

namespace bubblesim {

/// Largest cluster the builders (and the loader) accept: 2^20 GPUs, about 1.5 GB of topology
/// (vertices, links and names) for the DGX-like nodes of the builders; a replay's cost past the
/// topology does not grow with the replicas (docs/performance.md, "Scaling"). Raise it and
/// rebuild for more; the error says so.
inline constexpr std::int64_t kMaxTopologyGpus = std::int64_t{1} << 20;

struct LinkParams {
  Bandwidth bandwidth;
  Time latency;
};

struct NodeParams {
  std::int32_t gpus = 8;
  // NVLink 4 on H100: 900GB/s bidirectional = 450GB/s per direction through the NVSwitches.
  LinkParams nvlink{Bandwidth::bytes_per_second(450e9), Time::from_ps(500'000)};
  // PCIe Gen5 x16: 64GB/s per direction raw.
  LinkParams pcie{Bandwidth::bytes_per_second(64e9), Time::from_ps(1'000'000)};
  std::int32_t gpus_per_pcie_switch = 2;
};

/// How the NICs of a multi-node cluster are connected.
enum class NetworkShape {
  SingleSwitch,  // every NIC to one switch `netsw0`
  FatTree,  // two-level k-ary fat tree: k/2 NICs per leaf switch `leafI`, every leaf to k/2 spines
            // `spineJ`
  Rail,     // rail-optimized: NIC i of every node to rail switch `railI`; rails joined by `spine0`
};

struct ClusterParams {
  std::int32_t nodes = 2;
  NodeParams node;
  // ConnectX-7: 400Gb/s per GPU.
  LinkParams nic{Bandwidth::bytes_per_second(400e9 / 8), Time::from_ps(2'000'000)};
  // Latency of one switch traversal; half of it is put on each link into and out of a switch.
  Time network_latency = Time::from_ps(1'000'000);
  NetworkShape shape = NetworkShape::SingleSwitch;
  std::int32_t switch_radix = 32;  // FatTree: ports per switch (even, >= 2)
  /// The network switches reduce in the network (NVIDIA SHARP, Topology::set_sharp).
  bool sharp = false;
};

/// One node: N GPUs on an NVSwitch (`nvswitch0`), GPUs grouped under PCIe switches linked to
/// `host0`. Throws std::invalid_argument when a parameter is out of range.
Topology build_single_node(const NodeParams& params);
/// Several nodes joined by a network. Throws std::invalid_argument when a parameter is out of
/// range.
Topology build_cluster(const ClusterParams& params);

}  // namespace bubblesim
