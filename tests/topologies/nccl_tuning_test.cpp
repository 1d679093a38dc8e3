// NCCL's topology search and tuning model (topologies/nccl/) on the nodes of DGX A100 and H100
// systems, each number worked out from NCCL's own tables (nccl_constants.h cites their lines).
#include "topologies/nccl/nccl_tuning.h"

#include <doctest/doctest.h>

#include "topologies/nccl/nccl_graph.h"

namespace bubblesim::nccl {
namespace {

/// A DGX node as NCCL sees it: 8 GPUs on NVSwitches, one NIC per GPU on its PCIe switch.
NodeView dgx(double nvlink, double pci, double nic) {
  NodeView v;
  v.gpus = 8;
  v.nvlink_bw = nvlink;
  v.nvswitch = true;
  v.pci_bw = pci;
  for (int i = 0; i < 8; ++i) v.nics.push_back({nic, pci, 1, false});
  return v;
}
// NCCL's numbers for a DGX H100: 18 NVLinks x 20.6 GB/s (topo.h SM90_NVLINK_BW), PCIe Gen5 x16 at
// 48 GB/s (topo.cc), 400 Gb/s NICs at 50 GB/s; a DGX A100: 12 x 20, Gen4 x16 at 24, HDR 25.
NodeView dgx_h100() { return dgx(18 * 20.6, 48, 50); }
NodeView dgx_a100() { return dgx(12 * 20.0, 24, 25); }

const Graph& graph(const Comm& c, Algo a) { return c.graphs[static_cast<std::size_t>(a)]; }

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

TEST_CASE("NCCL's search across DGX H100 nodes: 8 channels at 48 GB/s, NVLS heads at 40/48") {
  const Comm c = communicator(dgx_h100(), Arch::Hopper, 512, 64);
  // Ring: maxBw = min(PCIe 48, NIC 50) = 48, the fastest sm90 inter speed; at 48 each NIC takes
  // floor(50/48) = 1 channel, each GPU's NVLinks 8 x 48 x 7/8 = 336 <= 370.8: 8 channels, and
  // 8 x 48 = 384 >= totalBw 370.8 ends the search. No duplication (Hopper, 48 < 50, 8 > 4).
  CHECK(graph(c, Algo::Ring).channels == 8);
  CHECK(graph(c, Algo::Ring).bw_inter == 48.0);
  CHECK(graph(c, Algo::Tree).channels == 8);
  CHECK(graph(c, Algo::Tree).bw_inter == 48.0);
  // NVLS: a head's NVLinks carry (heads + 1) x s: 9 x 40 = 360 <= 370.8 is the first speed with a
  // head per NIC; the second pass raises the NICs' speed to 48.
  CHECK(graph(c, Algo::Nvls).channels == 8);
  CHECK(graph(c, Algo::Nvls).bw_intra == 40.0);
  CHECK(graph(c, Algo::Nvls).bw_inter == 48.0);
  CHECK(c.nvls);
  CHECK(c.channels == 8);
}

TEST_CASE("NCCL's search across DGX A100 nodes: 8 channels at 24 GB/s, the tree's chain at 30") {
  const Comm c = communicator(dgx_a100(), Arch::Ampere, 512, 64);
  // maxBw = min(24, 25) = 24: 8 channels x 24 = 192 GB/s (NVIDIA's measured DGX A100 all-reduce
  // bus bandwidth, NVIDIA/nccl#812). Slower speeds give no more (12: 16 x 12 = 192, a tie).
  CHECK(graph(c, Algo::Ring).channels == 8);
  CHECK(graph(c, Algo::Ring).bw_inter == 24.0);
  // The tree's second pass raises its chain: 28 and 30 still fit 8 channels on 240 GB/s of
  // NVLink (floor(240 x 8 / (7 x 30)) = 9), 48 does not (5).
  CHECK(graph(c, Algo::Tree).channels == 8);
  CHECK(graph(c, Algo::Tree).bw_inter == 24.0);
  CHECK(graph(c, Algo::Tree).bw_intra == 30.0);
  CHECK_FALSE(c.nvls);  // NVLink SHARP is Hopper's
}

TEST_CASE("NCCL's search inside one H100 node: ring 12 x 30, NVLS 8 x 40/60") {
  const Comm c = communicator(dgx_h100(), Arch::Hopper, 8, 1);
  // Ring: 6 channels at 60 (6 x 60 = 360 <= 370.8) beat 7 x 50 and tie 9 x 40; duplicated to 12
  // x 30.
  CHECK(graph(c, Algo::Ring).channels == 12);
  CHECK(graph(c, Algo::Ring).bw_intra == 30.0);
  CHECK(graph(c, Algo::Nvls).channels == 8);
  CHECK(graph(c, Algo::Nvls).bw_intra == 40.0);
  CHECK(graph(c, Algo::Nvls).bw_inter == 60.0);
  const Tuning t(c);
  const auto p = t.choose(CollectiveKind::AllReduce, 8 * kGiB);
  REQUIRE(p);
  CHECK(p->algo == Algo::Nvls);
  // NVLS: 40 x 0.85 (nvlsEfficiency) x 7/8 x 2 = 59.5 per channel, under the 60 of the NICs'
  // pass; 8 channels = 476 GB/s of bus bandwidth (nccl-tests measures 473-480 on 8 H100/H200),
  // as algorithm bandwidth x 8 / 14.
  CHECK(p->bandwidth == doctest::Approx(476.0 * 8 / 14));
}

TEST_CASE("DP 512 all-reduce of 1 GiB on DGX A100 nodes: NCCL's tree, 15.31 ms") {
  const Tuning t(communicator(dgx_a100(), Arch::Ampere, 512, 64));
  const double bytes = kGiB;
  const auto p = t.choose(CollectiveKind::AllReduce, bytes);
  REQUIRE(p);
  CHECK(p->algo == Algo::Tree);
  CHECK(p->proto == Proto::Simple);
  // Tree, Simple: bus bandwidth 8 channels x 24 = 192, x 0.92 = 176.6, capped at 8 x 17.8
  // (perChMaxTreeBws, Ampere, > 2 nodes) = 142.4; algorithm bandwidth half of it, 71.2 GB/s.
  // Latency: 8.4 + 2 x ((8 - 1) x 4.0 (NVLink) + log2(64) x 14 (network)) = 232.4 us.
  CHECK(p->bandwidth == doctest::Approx(71.2));
  CHECK(p->latency_us == doctest::Approx(232.4));
  CHECK(p->time_us == doctest::Approx(232.4 + bytes / 71.2e3));  // 15313.0 us
  // The ring: 192 x 512 / 1022 = 96.19 GB/s; latency 8.4 + 896 x 3.4 + 126 x 14 = 4818.8 us,
  // x 1.4 (the ring's plateau between nodes) = 6746.3 us: 17.91 ms.
  const auto ring = t.choose(CollectiveKind::AllReduce, bytes, Algo::Ring);
  REQUIRE(ring);
  CHECK(ring->proto == Proto::LL128);  // LL128: 160 x 512/1022 with 2220.4 us, 15.62 ms
  const auto ring_simple = t.predict(CollectiveKind::AllReduce, Algo::Ring, Proto::Simple, bytes);
  REQUIRE(ring_simple);
  CHECK(ring_simple->time_us == doctest::Approx(4818.8 * 1.4 + bytes / (192e3 * 512 / 1022)));
  CHECK(ring->time_us ==
        doctest::Approx(14 + 896 * 1.9 + 126 * 4.0 + bytes / (160e3 * 512 / 1022)));
}

TEST_CASE("DP 512 all-reduce of 1 GiB on DGX H100 nodes: NCCL's NVLS tree") {
  const Tuning t(communicator(dgx_h100(), Arch::Hopper, 512, 64));
  const auto p = t.choose(CollectiveKind::AllReduce, kGiB);
  REQUIRE(p);
  CHECK(p->algo == Algo::NvlsTree);
  // min(40 x 0.85 x 7/8 x 2 = 59.5, NICs 48, perChMaxNVLSTreeBw 45.5) x 8 = 364 GB/s bus,
  // x 512/1022; latency 25 (NVLink) + 2 x 6 x 20.9 (network) = 275.8 us: 6.16 ms.
  CHECK(p->time_us == doctest::Approx(275.8 + kGiB / (364e3 * 512 / 1022)));
  const auto tree = t.choose(CollectiveKind::AllReduce, kGiB, Algo::Tree);
  REQUIRE(tree);  // 232.4 us + 1 GiB / (min(384 x .92, 8 x 36) / 2 = 144 GB/s) = 7.69 ms
  CHECK(tree->time_us == doctest::Approx(232.4 + kGiB / 144e3));
}

TEST_CASE("ring latency grows with n, tree's with log n; PAT runs one GPU per node") {
  // One GPU per node (TP 8 groups): every rank's own NIC, 1 channel at 48 duplicated to 2 x 24.
  NodeView one = dgx_h100();
  one.gpus = 1;
  one.nics.resize(1);
  for (int nodes : {64, 1024}) {
    const Tuning t(communicator(one, Arch::Hopper, nodes, nodes));
    const double small = 64 * 1024;
    const auto ring = t.predict(CollectiveKind::AllGather, Algo::Ring, Proto::Simple, small);
    const auto pat = t.predict(CollectiveKind::AllGather, Algo::Pat, Proto::Simple, small);
    REQUIRE(ring);
    REQUIRE(pat);
    // Ring: 8.4 + (n - 1) x (14 + 0) us (ppn 1: the tree's network latency per step).
    CHECK(ring->latency_us == doctest::Approx(8.4 + (nodes - 1) * 14.0));
    // PAT: 8.0 + log2(n) x 14 / 3.5 + n x 2.8.
    int log_n = 0;
    while ((1 << (log_n + 1)) <= nodes) ++log_n;
    CHECK(pat->latency_us == doctest::Approx(8.0 + log_n * 4.0 + nodes * 2.8));
    CHECK(t.choose(CollectiveKind::AllGather, small)->algo == Algo::Pat);
    CHECK_FALSE(t.predict(CollectiveKind::AllReduce, Algo::Pat, Proto::Simple, small));
  }
  // Several GPUs per node: no PAT.
  const Tuning eight(communicator(dgx_h100(), Arch::Hopper, 64, 8));
  CHECK_FALSE(eight.predict(CollectiveKind::AllGather, Algo::Pat, Proto::Simple, kGiB));
}

}  // namespace bubblesim::nccl
