// The expert all-to-all as flows (docs/moe.md): every GPU sends bytes / n to each other GPU at
// once; inside a node the NVLink carries it, across nodes the NIC, and node-limited routing
// scales the cross-node flows.
#include <doctest/doctest.h>

#include "sim/engine/collectives.h"
#include "sim/units/diagnostics.h"
#include "topologies/topology_builders.h"

using namespace bubblesim;

namespace {

std::vector<VertexId> gpus_of(const Topology& t, std::int32_t nodes, std::int32_t per_node) {
  std::vector<VertexId> out;
  for (std::int32_t n = 0; n < nodes; ++n) {
    for (std::int32_t g = 0; g < per_node; ++g)
      out.push_back(*t.find("n" + std::to_string(n) + ".gpu" + std::to_string(g)));
  }
  return out;
}

}  // namespace

TEST_CASE("all-to-all across nodes: the NIC carries (n - local) / n of every GPU's bytes") {
  ClusterParams p;
  p.nodes = 4;
  p.node.gpus = 4;
  p.node.nvlink = {Bandwidth::bytes_per_second(400e9), Time::zero()};
  p.node.pcie = {Bandwidth::bytes_per_second(1000e9), Time::zero()};
  p.nic = {Bandwidth::bytes_per_second(50e9), Time::zero()};
  p.network_latency = Time::zero();
  const Topology t = build_cluster(p);
  const std::vector<VertexId> gpus = gpus_of(t, 4, 4);
  const double bytes = 16e6;  // 1 MB to each of the 16 GPUs
  // 12 MB leave each GPU through its NIC at 50 GB/s; 3 MB go over NVLink at 400 GB/s.
  const Time full = simulate_all_to_all(t, gpus, bytes);
  CHECK(full.seconds() == doctest::Approx(12e6 / 50e9).epsilon(0.02));
  const Time limited = simulate_all_to_all(t, gpus, bytes, 0.5);
  CHECK(limited.seconds() == doctest::Approx(6e6 / 50e9).epsilon(0.02));
  // One node: NVLink only.
  const std::vector<VertexId> one(gpus.begin(), gpus.begin() + 4);
  CHECK(simulate_all_to_all(t, one, bytes).seconds() ==
        doctest::Approx(12e6 / 400e9).epsilon(0.02));
  CHECK(simulate_all_to_all(t, {gpus[0]}, bytes) == Time::zero());
}

TEST_CASE("collectives beyond kMaxCollectiveFlows are refused before any flow is built") {
  NodeParams p;
  p.gpus = 4097;  // 4097 x 4096 all-to-all flows > 2^24
  const Topology t = build_single_node(p);
  CHECK_THROWS_AS(simulate_all_to_all(t, t.gpus(), 1e6, 1.0), InputError);
  std::vector<std::int32_t> one_node(2897, 0);  // a ring all-reduce: 2 x 2896 steps x 2897 flows
  CHECK_THROWS_AS(collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e6,
                                   one_node, RingSteps::Stepped),
                  InputError);
  // Pipelined (the default), the same ring is 2897 flows.
  CHECK(collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e6, one_node)
            .front()
            .size() == 2897);
  one_node.resize(64);
  CHECK(collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, 1e6, one_node,
                         RingSteps::Stepped)
            .size() == 2 * 63);
}
