// Collectives between nodes as NCCL runs them (sim/engine/collective_plan.h): channels over every
// NIC, and NCCL's algorithm and time from its tuning model, on clusters of the builders.
#include <doctest/doctest.h>

#include <map>

#include "sim/engine/collective_plan.h"
#include "sim/units/diagnostics.h"
#include "topologies/topology_builders.h"

using namespace bubblesim;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

/// Bytes each directed link carries when every flow of `plan` runs to its end.
std::map<LinkId, double> link_loads(const Topology& t, const CollectivePlan& plan) {
  std::map<LinkId, double> out;
  for (const CollectiveStep& step : plan.layout.steps) {
    for (const CollectiveTransfer& x : step) {
      auto r = t.route(plan.layout.endpoints[static_cast<std::size_t>(x.from)],
                       plan.layout.endpoints[static_cast<std::size_t>(x.to)]);
      REQUIRE(r);
      for (LinkId l : r->links) out[l] += x.bytes;
    }
  }
  return out;
}

/// The bytes node `node`'s NICs send into the network, per NIC (n<node>.nic<i> -> netsw0).
std::vector<double> nic_sends(const Topology& t, const std::map<LinkId, double>& loads, int node,
                              int nics) {
  std::vector<double> out;
  for (int i = 0; i < nics; ++i) {
    const auto from = t.find("n" + std::to_string(node) + ".nic" + std::to_string(i));
    const auto to = t.find("netsw0");
    REQUIRE(from);
    REQUIRE(to);
    const auto links = t.links_between(*from, *to);
    REQUIRE(links.size() == 1);
    const auto it = loads.find(links.front());
    out.push_back(it == loads.end() ? 0.0 : it->second);
  }
  return out;
}

ClusterParams dgx_a100_cluster(int nodes) {
  // DGX A100 as docs/validation-megatron.md describes it: NVLink 3 at 300 GB/s a direction,
  // PCIe Gen4 x16 (32 GB/s), one 200 Gb/s HDR NIC per GPU.
  ClusterParams p;
  p.nodes = nodes;
  p.node.nvlink = {Bandwidth::bytes_per_second(300e9), Time::from_ps(500'000)};
  p.node.pcie = {Bandwidth::bytes_per_second(32e9), Time::from_ps(1'000'000)};
  p.nic = {Bandwidth::bytes_per_second(25e9), Time::from_ps(2'000'000)};
  return p;
}

}  // namespace

TEST_CASE("a 4-node DP ring with 8 GPUs per node moves its inter-node bytes over all 8 NICs") {
  ClusterParams p;  // DGX-H100-like nodes on one switch
  p.nodes = 4;
  const Topology t = build_cluster(p);
  const std::vector<VertexId> ranks = t.gpus();  // 32 ranks, 8 per node
  const double bytes = kGiB;
  // One ring all-reduce moves 2 (n - 1) / n S per rank; across each node boundary, C channels.
  const double share = 2.0 * 31 / 32 * bytes;

  CollectivePlanner nics(t, CollectiveOptions{});
  const CollectivePlan plan = nics.plan(ranks, CollectiveKind::AllReduce, bytes);
  CHECK(plan.layout.channels == 8);
  // 2 flows per rank whatever the channels: each GPU's cycle edge inside the node, and a cut.
  REQUIRE(plan.layout.steps.size() == 1);
  CHECK(plan.layout.steps[0].size() == 2 * 32);
  const auto loads = link_loads(t, plan);
  for (int node = 0; node < 4; ++node) {
    // Every NIC sends one channel, 1/8 of the inter-node bytes.
    for (double sent : nic_sends(t, loads, node, 8)) CHECK(sent == doctest::Approx(share / 8));
  }

  // The ablation: one channel crosses each node boundary through one GPU's NIC.
  CollectiveOptions one_opt;
  one_opt.channels = CollectiveChannels::One;
  CollectivePlanner one(t, one_opt);
  const CollectivePlan single = one.plan(ranks, CollectiveKind::AllReduce, bytes);
  CHECK(single.layout.channels == 1);
  const auto single_loads = link_loads(t, single);
  for (int node = 0; node < 4; ++node) {
    const std::vector<double> sent = nic_sends(t, single_loads, node, 8);
    CHECK(sent[7] == doctest::Approx(share));  // the node's last GPU sends it all
    for (int i = 0; i < 7; ++i) CHECK(sent[static_cast<std::size_t>(i)] == 0.0);
  }

  // Timed as flows (8 GiB, so that the ring's 62 route latencies weigh little): the 8 NICs at
  // 50 GB/s each take share / 8 (the NVLinks, 7/8 of the share at 450 GB/s, are faster); one NIC
  // takes all of it.
  const double big = 8 * kGiB, big_share = 2.0 * 31 / 32 * big;
  const double spread =
      simulate_planned(nics, ranks, CollectiveKind::AllReduce, big).simulated.seconds();
  const double through_one =
      simulate_planned(one, ranks, CollectiveKind::AllReduce, big).simulated.seconds();
  CHECK(spread == doctest::Approx(big_share / 8 / 50e9).epsilon(0.03));
  CHECK(through_one == doctest::Approx(big_share / 50e9).epsilon(0.03));
}

TEST_CASE("DP 512 all-reduce of 1 GiB takes NCCL's tree time on DGX A100 nodes") {
  const Topology t = build_cluster(dgx_a100_cluster(64));
  const std::vector<VertexId> ranks = t.gpus();
  REQUIRE(ranks.size() == 512);
  CollectiveOptions o;
  o.nccl = nccl::Arch::Ampere;
  CollectivePlanner planner(t, o);
  CollectivePlan plan;
  const CollectiveTiming r =
      simulate_planned(planner, ranks, CollectiveKind::AllReduce, kGiB, &plan);
  CHECK(plan.algorithm == CollectiveAlgorithm::Tree);
  CHECK(plan.protocol == "Simple");
  // NCCL's tuning model for this shape (nccl_tuning_test.cpp has its terms): tree, 8 channels of
  // 24 GB/s, bus bandwidth min(192 x 0.92, 8 x 17.8) = 142.4 GB/s, algorithm bandwidth 71.2 GB/s,
  // latency 8.4 + 2 x (7 x 4.0 + 6 x 14) = 232.4 us: 232.4 + 2^30 / 71.2e3 = 15313.0 us.
  const double nccl_us = 232.4 + kGiB / 71.2e3;
  CHECK(plan.predicted.seconds() * 1e6 == doctest::Approx(nccl_us));
  // The flows: each NIC carries 2 S / 8 each way (the double binary trees) at 25 GB/s, 10.7 ms,
  // under NCCL's 15.08 ms of bandwidth, so NCCL's time holds, within 10%.
  CHECK(r.simulated.seconds() * 1e6 == doctest::Approx(nccl_us).epsilon(0.10));
  CHECK(r.simulated.seconds() * 1e6 >= nccl_us * 0.999);

  // Forced ring: NCCL's ring, LL128 (14 + 896 x 1.9 + 126 x 4.0 = 2220.4 us, 160 x 512/1022 GB/s).
  o.algorithm = CollectiveAlgorithm::Ring;
  CollectivePlanner ring_planner(t, o);
  CollectivePlan ring;
  const CollectiveTiming rr =
      simulate_planned(ring_planner, ranks, CollectiveKind::AllReduce, kGiB, &ring);
  CHECK(ring.algorithm == CollectiveAlgorithm::Ring);
  const double ring_us = 2220.4 + kGiB / (160e3 * 512 / 1022);
  CHECK(ring.predicted.seconds() * 1e6 == doctest::Approx(ring_us));
  CHECK(rr.simulated.seconds() * 1e6 == doctest::Approx(ring_us).epsilon(0.10));
}

TEST_CASE("forcing an algorithm NCCL does not run there is refused") {
  const Topology t = build_cluster(dgx_a100_cluster(2));
  CollectiveOptions o;
  o.nccl = nccl::Arch::Ampere;
  o.algorithm = CollectiveAlgorithm::Pat;  // all-gather with one GPU per node only
  CollectivePlanner planner(t, o);
  CHECK_THROWS_AS(planner.plan(t.gpus(), CollectiveKind::AllReduce, kGiB), InputError);
  o.algorithm = CollectiveAlgorithm::Nvls;  // Hopper's
  CollectivePlanner nvls(t, o);
  CHECK_THROWS_AS(nvls.plan(t.gpus(), CollectiveKind::AllReduce, kGiB), InputError);
}

TEST_CASE("the tree and NVLS layouts keep a few flows per rank") {
  ClusterParams p;
  p.nodes = 16;
  const Topology t = build_cluster(p);
  const std::vector<VertexId> ranks = t.gpus();  // 128
  CollectiveOptions o;
  o.algorithm = CollectiveAlgorithm::Tree;
  CollectivePlanner tree(t, o);
  const CollectivePlan plan = tree.plan(ranks, CollectiveKind::AllReduce, kGiB);
  CHECK(plan.algorithm == CollectiveAlgorithm::Tree);
  // Inside the nodes 2 flows per cycle edge (up, down); between them each channel's head (one
  // per GPU here) sends into the network switch and receives from it.
  CHECK(plan.layout.steps[0].size() == 2 * 128 + 2 * 128);
  CHECK(plan.layout.endpoints.size() == 128 + 1);  // the ranks, then netsw0
  // What the heads send: per channel, each of the 2 trees' 15 edges carries S / 16 each way (S/C
  // of the channel, half per tree): 2 x 15 x 2 x 8 channels x S / 16 = 30 S over all heads.
  double inter = 0;
  for (const CollectiveTransfer& x : plan.layout.steps[0]) {
    if (x.to == 128) inter += x.bytes;
  }
  CHECK(inter == doctest::Approx(2.0 * 15 * 2 * 8 * kGiB / 16));
  o.algorithm = CollectiveAlgorithm::NvlsTree;
  CollectivePlanner nvls(t, o);
  const CollectivePlan nv = nvls.plan(ranks, CollectiveKind::AllReduce, kGiB);
  CHECK(nv.algorithm == CollectiveAlgorithm::NvlsTree);
  CHECK(nv.layout.endpoints.size() == 128 + 16 + 1);  // the ranks, the NVSwitches, netsw0
}

TEST_CASE("CollNet through a SHARP switch halves what the NICs carry") {
  ClusterParams p;  // DGX-H100-like nodes on one switch that reduces in the network
  p.nodes = 4;
  p.sharp = true;
  const Topology t = build_cluster(p);
  const std::vector<VertexId> ranks = t.gpus();
  CollectiveOptions o;
  o.nccl = nccl::Arch::Hopper;
  o.algorithm = CollectiveAlgorithm::CollNet;
  CollectivePlanner planner(t, o);
  const CollectivePlan plan = planner.plan(ranks, CollectiveKind::AllReduce, kGiB);
  CHECK(plan.algorithm == CollectiveAlgorithm::CollNet);
  CHECK(plan.layout.endpoints.back() == *t.find("netsw0"));
  // Each channel's head sends its S / 8 to the switch once; a ring sends 2 (n-1)/n S / 8.
  const auto loads = link_loads(t, plan);
  for (int node = 0; node < 4; ++node)
    for (double sent : nic_sends(t, loads, node, 8)) CHECK(sent == doctest::Approx(kGiB / 8));
  // NVLS runs across nodes only with CollNet (tuning.cc:505): NCCL's choice here for 8 GiB.
  CollectiveOptions a;
  a.nccl = nccl::Arch::Hopper;
  CollectivePlanner chooser(t, a);
  CHECK(chooser.plan(ranks, CollectiveKind::AllReduce, 8 * kGiB).algorithm ==
        CollectiveAlgorithm::Nvls);
  ClusterParams no_sharp = p;
  no_sharp.sharp = false;
  const Topology plain = build_cluster(no_sharp);
  CollectivePlanner refused(plain, o);
  CHECK_THROWS_AS(refused.plan(plain.gpus(), CollectiveKind::AllReduce, kGiB), InputError);
}
