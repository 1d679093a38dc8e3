#include "topologies/topology_builders.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace bubblesim {
namespace {

void check_link_params(const LinkParams& p, const char* what) {
  if (!(p.bandwidth.bytes_per_second() > 0.0)) {
    throw std::invalid_argument(fmt::format("{} bandwidth must be positive", what));
  }
  if (p.latency < Time::zero())
    throw std::invalid_argument(fmt::format("{} latency must not be negative", what));
}

void check_node(const NodeParams& p) {
  if (p.gpus < 1 || p.gpus > kMaxTopologyGpus) {
    throw std::invalid_argument(
        fmt::format("a node needs 1 to {} GPUs, not {}", kMaxTopologyGpus, p.gpus));
  }
  if (p.gpus_per_pcie_switch < 1 || p.gpus_per_pcie_switch > p.gpus) {
    throw std::invalid_argument(
        fmt::format("gpus_per_pcie_switch must be between 1 and the GPUs per node ({}), not {}",
                    p.gpus, p.gpus_per_pcie_switch));
  }
  check_link_params(p.nvlink, "nvlink");
  check_link_params(p.pcie, "pcie");
}

struct NodeVertices {
  std::vector<VertexId> gpus;
  std::vector<VertexId> pcie_of_gpu;
};

// GPUs are added first so that Topology::gpus() lists them in node order.
NodeVertices add_node(Topology& t, const std::string& prefix, const NodeParams& p) {
  NodeVertices out;
  for (std::int32_t g = 0; g < p.gpus; ++g)
    out.gpus.push_back(t.add_vertex(fmt::format("{}gpu{}", prefix, g), VertexKind::Gpu));
  VertexId nvswitch = t.add_vertex(prefix + "nvswitch0", VertexKind::Switch);
  VertexId host = t.add_vertex(prefix + "host0", VertexKind::Host);
  for (VertexId gpu : out.gpus) t.add_link(gpu, nvswitch, p.nvlink.bandwidth, p.nvlink.latency);
  const std::int32_t switches = (p.gpus + p.gpus_per_pcie_switch - 1) / p.gpus_per_pcie_switch;
  std::vector<VertexId> pcie;
  for (std::int32_t s = 0; s < switches; ++s) {
    pcie.push_back(t.add_vertex(fmt::format("{}pcie{}", prefix, s), VertexKind::PcieSwitch));
    t.add_link(pcie.back(), host, p.pcie.bandwidth, p.pcie.latency);
  }
  for (std::int32_t g = 0; g < p.gpus; ++g) {
    VertexId sw = pcie[static_cast<std::size_t>(g / p.gpus_per_pcie_switch)];
    t.add_link(out.gpus[static_cast<std::size_t>(g)], sw, p.pcie.bandwidth, p.pcie.latency);
    out.pcie_of_gpu.push_back(sw);
  }
  return out;
}

}  // namespace

Topology build_single_node(const NodeParams& params) {
  check_node(params);
  Topology t;
  add_node(t, "", params);
  return t;
}

Topology build_cluster(const ClusterParams& params) {
  check_node(params.node);
  check_link_params(params.nic, "nic");
  if (params.network_latency < Time::zero())
    throw std::invalid_argument("network latency must not be negative");
  if (params.nodes < 1)
    throw std::invalid_argument(
        fmt::format("a cluster needs at least 1 node, not {}", params.nodes));
  const std::int64_t total = std::int64_t{params.nodes} * params.node.gpus;
  if (total > kMaxTopologyGpus) {
    throw std::invalid_argument(
        fmt::format("{} nodes x {} GPUs = {} GPUs is more than the limit of {} "
                    "(kMaxTopologyGpus in topologies/topology_builders.h: raise it and rebuild)",
                    params.nodes, params.node.gpus, total, kMaxTopologyGpus));
  }
  if (params.shape == NetworkShape::FatTree &&
      (params.switch_radix < 2 || params.switch_radix % 2 != 0)) {
    throw std::invalid_argument(
        fmt::format("a fat tree needs an even switch radix >= 2, not {}", params.switch_radix));
  }

  Topology t;
  std::vector<std::vector<VertexId>> nics(static_cast<std::size_t>(params.nodes));  // [node][gpu]
  for (std::int32_t n = 0; n < params.nodes; ++n) {
    const std::string prefix = fmt::format("n{}.", n);
    NodeVertices node = add_node(t, prefix, params.node);
    for (std::int32_t g = 0; g < params.node.gpus; ++g) {
      VertexId nic = t.add_vertex(fmt::format("{}nic{}", prefix, g), VertexKind::Nic);
      t.add_link(node.pcie_of_gpu[static_cast<std::size_t>(g)], nic, params.node.pcie.bandwidth,
                 params.node.pcie.latency);
      // GPU g's traffic leaves and enters the node through NIC g, also when the GPUs of a PCIe
      // switch share it with their NICs (NCCL pairs each GPU with its nearest NIC).
      t.set_nic(node.gpus[static_cast<std::size_t>(g)], nic);
      nics[static_cast<std::size_t>(n)].push_back(nic);
    }
  }

  // The network's switches, SHARP-capable when the cluster says so.
  auto network_switch = [&](const std::string& name) {
    const VertexId sw = t.add_vertex(name, VertexKind::Switch);
    if (params.sharp) t.set_sharp(sw);
    return sw;
  };
  const Time half = params.network_latency / 2;
  const Time nic_to_switch = params.nic.latency + half;
  const Bandwidth bw = params.nic.bandwidth;
  switch (params.shape) {
    case NetworkShape::SingleSwitch: {
      VertexId sw = network_switch("netsw0");
      for (const auto& node : nics) {
        for (VertexId nic : node) t.add_link(nic, sw, bw, nic_to_switch);
      }
      break;
    }
    case NetworkShape::FatTree: {
      const std::int64_t down = params.switch_radix / 2;
      const std::int64_t leaves = (total + down - 1) / down;
      std::vector<VertexId> spine;
      for (std::int64_t s = 0; s < down; ++s)
        spine.push_back(network_switch(fmt::format("spine{}", s)));
      std::vector<VertexId> leaf;
      for (std::int64_t l = 0; l < leaves; ++l) {
        leaf.push_back(network_switch(fmt::format("leaf{}", l)));
        for (VertexId s : spine) t.add_link(leaf.back(), s, bw, half + half);
      }
      std::int64_t i = 0;
      for (const auto& node : nics) {
        for (VertexId nic : node)
          t.add_link(nic, leaf[static_cast<std::size_t>(i++ / down)], bw, nic_to_switch);
      }
      break;
    }
    case NetworkShape::Rail: {
      VertexId spine = network_switch("spine0");
      for (std::int32_t r = 0; r < params.node.gpus; ++r) {
        VertexId rail = network_switch(fmt::format("rail{}", r));
        t.add_link(rail, spine, bw, half + half);
        for (const auto& node : nics)
          t.add_link(node[static_cast<std::size_t>(r)], rail, bw, nic_to_switch);
      }
      break;
    }
  }
  return t;
}

}  // namespace bubblesim
