#include "topologies/topology.h"

#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "topologies/topology_builders.h"

namespace bubblesim {
namespace {

Bandwidth gbps(double gb_per_s) { return Bandwidth::bytes_per_second(gb_per_s * 1e9); }
Time us(std::int64_t n) { return Time::from_ps(n * 1'000'000); }

std::string path_names(const Topology& t, const Route& r) {
  std::string out;
  for (LinkId l : r.links) out += (out.empty() ? "" : " ") + t.link_name(l);
  return out;
}

std::string route_names(const Topology& t, const std::string& a, const std::string& b) {
  auto r = t.route(*t.find(a), *t.find(b));
  REQUIRE(r.has_value());
  return path_names(t, *r);
}

TEST_CASE("vertices and full-duplex links") {
  Topology t;
  VertexId a = t.add_vertex("gpu0", VertexKind::Gpu);
  VertexId h = t.add_vertex("host0", VertexKind::Host);
  VertexId b = t.add_vertex("gpu1", VertexKind::Gpu);
  t.add_link(a, h, gbps(32), us(2));
  CHECK(t.vertex_count() == 3);
  CHECK(t.link_count() == 2);
  CHECK(t.link_name(0) == "gpu0->host0");
  CHECK(t.link_name(1) == "host0->gpu0");
  CHECK(t.link_source(1) == h);
  CHECK(t.link_target(1) == a);
  CHECK(t.link_latency(0) == us(2));
  CHECK(t.link_bandwidth(1) == gbps(32));
  CHECK(t.gpus() == std::vector<VertexId>{a, b});
  CHECK(t.find("host0") == h);
  CHECK_FALSE(t.find("nope").has_value());
  CHECK(t.vertex_kind(h) == VertexKind::Host);
  CHECK(vertex_kind_name(VertexKind::PcieSwitch) == "pcie-switch");
  CHECK(t.links_between(h, a) == std::vector<LinkId>{1});
  CHECK_THROWS_WITH_AS(t.add_vertex("gpu0", VertexKind::Nic),
                       "duplicate topology vertex name 'gpu0'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.add_link(a, a, gbps(1), us(1)),
                       "a link from 'gpu0' to itself is not allowed", std::invalid_argument);
  CHECK_THROWS_AS(t.add_link(a, 17, gbps(1), us(1)), std::out_of_range);
}

TEST_CASE("routes: shortest by 1MiB time, unreachable is nullopt, self is empty") {
  Topology t;
  VertexId a = t.add_vertex("a", VertexKind::Gpu);
  VertexId b = t.add_vertex("b", VertexKind::Gpu);
  VertexId slow = t.add_vertex("slow", VertexKind::Switch);
  VertexId fast = t.add_vertex("fast", VertexKind::Switch);
  VertexId island = t.add_vertex("island", VertexKind::Gpu);
  t.add_link(a, slow, gbps(1), us(1));
  t.add_link(slow, b, gbps(1), us(1));
  t.add_link(a, fast, gbps(100), us(5));
  t.add_link(fast, b, gbps(100), us(5));
  auto r = t.route(a, b);
  REQUIRE(r);
  CHECK(path_names(t, *r) == "a->fast fast->b");
  CHECK(r->latency == us(10));
  CHECK(path_names(t, *t.route(b, a)) == "b->fast fast->a");
  CHECK_FALSE(t.route(a, island).has_value());
  auto self = t.route(a, a);
  REQUIRE(self);
  CHECK(self->links.empty());
  CHECK(self->latency == Time::zero());
  // Cached answers are the same answers.
  CHECK(path_names(t, *t.route(a, b)) == "a->fast fast->b");
  CHECK_FALSE(t.nearest_host(a).has_value());
}

TEST_CASE("routes: equal cost prefers fewer hops, then lower vertex ids") {
  Topology t;
  t.set_ecmp(false);  // the switches' choice by lowest id (ECMP: below)
  VertexId a = t.add_vertex("a", VertexKind::Gpu);
  VertexId z = t.add_vertex("z", VertexKind::Gpu);
  VertexId s2 = t.add_vertex("s2", VertexKind::Switch);
  VertexId s1 = t.add_vertex("s1", VertexKind::Switch);
  // Two equal two-hop paths via s2 (id 2) and s1 (id 3): the lower id wins whatever the order.
  t.add_link(a, s1, gbps(10), us(1));
  t.add_link(s1, z, gbps(10), us(1));
  t.add_link(a, s2, gbps(10), us(1));
  t.add_link(s2, z, gbps(10), us(1));
  CHECK(route_names(t, "a", "z") == "a->s2 s2->z");
  CHECK(route_names(t, "z", "a") == "z->s2 s2->a");

  // Same cost in one hop as in two: one hop wins. Cost of one 1MiB hop at 1MB/s... use exact ps:
  // hop cost = latency + 1MiB/bw; with bw = 1MiB/s each hop costs latency + 1s.
  Topology u;
  VertexId p = u.add_vertex("p", VertexKind::Gpu);
  VertexId m = u.add_vertex("m", VertexKind::Switch);
  VertexId q = u.add_vertex("q", VertexKind::Gpu);
  const Bandwidth mib_per_s = Bandwidth::bytes_per_second(1024.0 * 1024.0);
  u.add_link(p, m, mib_per_s, Time::zero());
  u.add_link(m, q, mib_per_s, Time::zero());
  u.add_link(p, q, mib_per_s, Time::from_ps(1'000'000'000'000));  // 1s + 1s, same as two hops
  auto r = u.route(p, q);
  REQUIRE(r);
  CHECK(path_names(u, *r) == "p->q");
}

TEST_CASE("single node: GPU to GPU goes over NVLink, host traffic over PCIe") {
  Topology t = build_single_node(NodeParams{});
  CHECK(t.gpus().size() == 8);
  CHECK(t.vertex_name(t.gpus()[7]) == "gpu7");
  CHECK(route_names(t, "gpu0", "gpu1") == "gpu0->nvswitch0 nvswitch0->gpu1");
  CHECK(route_names(t, "gpu0", "gpu7") == "gpu0->nvswitch0 nvswitch0->gpu7");
  CHECK(route_names(t, "gpu3", "host0") == "gpu3->pcie1 pcie1->host0");
  auto host = t.nearest_host(*t.find("gpu5"));
  REQUIRE(host);
  CHECK(t.vertex_name(*host) == "host0");
  // 4 PCIe switches for 8 GPUs, two per switch.
  CHECK(t.find("pcie3").has_value());
  CHECK_FALSE(t.find("pcie4").has_value());
}

TEST_CASE("multi-node: routes cross the NICs and the network switch") {
  ClusterParams p;
  p.nodes = 2;
  Topology t = build_cluster(p);
  CHECK(t.gpus().size() == 16);
  CHECK(t.vertex_name(t.gpus()[8]) == "n1.gpu0");
  CHECK(route_names(t, "n0.gpu0", "n1.gpu0") ==
        "n0.gpu0->n0.pcie0 n0.pcie0->n0.nic0 n0.nic0->netsw0 netsw0->n1.nic0 n1.nic0->n1.pcie0 "
        "n1.pcie0->n1.gpu0");
  CHECK(route_names(t, "n0.gpu2", "n0.gpu6") == "n0.gpu2->n0.nvswitch0 n0.nvswitch0->n0.gpu6");
  auto r = t.route(*t.find("n0.gpu0"), *t.find("n1.gpu0"));
  // pcie 1us x4 + (nic 2us + half of the 1us switch) x2.
  CHECK(r->latency == us(9));
  CHECK(t.vertex_name(*t.nearest_host(*t.find("n1.gpu3"))) == "n1.host0");
  // Every GPU is paired with the NIC built for it, also the second GPU of a PCIe switch.
  for (std::int32_t g = 0; g < 8; ++g) {
    const std::string n1 = "n1.";
    CHECK(t.nic_of(*t.find(n1 + "gpu" + std::to_string(g))) ==
          t.find(n1 + "nic" + std::to_string(g)));
  }
  CHECK(route_names(t, "n0.gpu1", "n1.gpu1") ==
        "n0.gpu1->n0.pcie0 n0.pcie0->n0.nic1 n0.nic1->netsw0 netsw0->n1.nic1 n1.nic1->n1.pcie0 "
        "n1.pcie0->n1.gpu1");
  // GPU to host stays inside the node, and NVLink stays the route between GPUs of a node.
  CHECK(route_names(t, "n0.gpu1", "n0.host0") == "n0.gpu1->n0.pcie0 n0.pcie0->n0.host0");
  CHECK(route_names(t, "n0.gpu1", "n0.gpu0") == "n0.gpu1->n0.nvswitch0 n0.nvswitch0->n0.gpu0");
}

TEST_CASE("scale_bandwidth: every link of a NIC at a share of its rate, the others untouched") {
  ClusterParams p;
  p.nodes = 2;
  Topology t = build_cluster(p);
  const Topology before = t;
  const std::string across = route_names(t, "n0.gpu0", "n1.gpu0");
  t.scale_bandwidth(VertexKind::Nic, 0.96);
  std::int32_t scaled = 0;
  for (LinkId l = 0; l < t.link_count(); ++l) {
    const bool nic = t.vertex_kind(t.link_source(l)) == VertexKind::Nic ||
                     t.vertex_kind(t.link_target(l)) == VertexKind::Nic;
    const double want = before.link_bandwidth(l).bytes_per_second() * (nic ? 0.96 : 1.0);
    CHECK(t.link_bandwidth(l).bytes_per_second() == doctest::Approx(want));
    scaled += nic ? 1 : 0;
  }
  CHECK(scaled == 2 * 16 * 2);  // 16 NICs, each linked to its PCIe switch and the network switch
  CHECK(route_names(t, "n0.gpu0", "n1.gpu0") == across);   // same route, at the lower rate
  CHECK(before.link_bandwidth(0).bytes_per_second() > 0);  // the copy kept its own links
  CHECK_THROWS_AS(t.scale_bandwidth(VertexKind::Nic, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(t.scale_bandwidth(VertexKind::Nic, 1.5), std::invalid_argument);
}

TEST_CASE("NIC affinity: set_nic pairs a GPU with a NIC and decides between equal routes") {
  // g0 and g1 share one PCIe switch with two NICs into one network switch, like a DGX node.
  Topology t;
  const VertexId g0 = t.add_vertex("g0", VertexKind::Gpu);
  const VertexId g1 = t.add_vertex("g1", VertexKind::Gpu);
  const VertexId far = t.add_vertex("far", VertexKind::Gpu);
  const VertexId pcie = t.add_vertex("pcie", VertexKind::PcieSwitch);
  const VertexId nic0 = t.add_vertex("nic0", VertexKind::Nic);
  const VertexId nic1 = t.add_vertex("nic1", VertexKind::Nic);
  const VertexId sw = t.add_vertex("sw", VertexKind::Switch);
  const Bandwidth bw = Bandwidth::bytes_per_second(50e9);
  for (VertexId v : {g0, g1, nic0, nic1}) t.add_link(v, pcie, bw, us(1));
  for (VertexId v : {nic0, nic1, far}) t.add_link(v, sw, bw, us(1));
  // Without a pairing equal routes resolve to the lower id: both GPUs on nic0.
  CHECK(route_names(t, "g1", "far") == "g1->pcie pcie->nic0 nic0->sw sw->far");
  CHECK_FALSE(t.nic_of(g1).has_value());
  t.set_nic(g1, nic1);
  CHECK(t.nic_of(g1) == nic1);
  CHECK(route_names(t, "g1", "far") == "g1->pcie pcie->nic1 nic1->sw sw->far");
  CHECK(route_names(t, "far", "g1") == "far->sw sw->nic1 nic1->pcie pcie->g1");
  CHECK(route_names(t, "g0", "far") == "g0->pcie pcie->nic0 nic0->sw sw->far");
  // Between the two GPUs the PCIe switch is shorter than any NIC: unaffected.
  CHECK(route_names(t, "g1", "g0") == "g1->pcie pcie->g0");
  // Two GPUs sharing one NIC is allowed; a pairing of the wrong kinds is not.
  t.set_nic(g0, nic1);
  CHECK(route_names(t, "g0", "far") == "g0->pcie pcie->nic1 nic1->sw sw->far");
  CHECK_THROWS_WITH_AS(t.set_nic(nic0, nic1),
                       "'nic0' (nic) cannot have 'nic1' (nic) as its NIC: a gpu vertex needs a "
                       "nic vertex",
                       std::invalid_argument);
  CHECK_THROWS_AS(t.set_nic(g0, sw), std::invalid_argument);
  CHECK_THROWS_AS(t.set_nic(g0, 99), std::out_of_range);

  // The pairing only breaks ties: a slower own NIC is not taken.
  Topology slow = t;
  const VertexId nic2 = slow.add_vertex("nic2", VertexKind::Nic);
  slow.add_link(nic2, pcie, bw, us(1));
  slow.add_link(nic2, sw, Bandwidth::bytes_per_second(25e9), us(1));
  slow.set_nic(g1, nic2);
  CHECK(route_names(slow, "g1", "far") == "g1->pcie pcie->nic0 nic0->sw sw->far");
}

TEST_CASE("fat tree and rail builders") {
  ClusterParams p;
  p.nodes = 4;
  p.shape = NetworkShape::FatTree;
  p.switch_radix = 16;  // 8 NICs per leaf: one leaf per node
  Topology ft = build_cluster(p);
  ft.set_ecmp(false);  // the lowest-id spine (ECMP spreads them: the test below)
  CHECK(ft.find("leaf3").has_value());
  CHECK_FALSE(ft.find("leaf4").has_value());
  CHECK(ft.find("spine7").has_value());
  CHECK(route_names(ft, "n0.gpu0", "n1.gpu0") ==
        "n0.gpu0->n0.pcie0 n0.pcie0->n0.nic0 n0.nic0->leaf0 leaf0->spine0 spine0->leaf1 "
        "leaf1->n1.nic0 "
        "n1.nic0->n1.pcie0 n1.pcie0->n1.gpu0");

  p.shape = NetworkShape::Rail;
  Topology rail = build_cluster(p);
  // gpu2 and gpu3 share pcie1 and so both NICs on it; of the equal routes each GPU takes the one
  // through its own NIC and rail, not the lower id (nic2) for both.
  CHECK(route_names(rail, "n0.gpu3", "n2.gpu3") ==
        "n0.gpu3->n0.pcie1 n0.pcie1->n0.nic3 n0.nic3->rail3 rail3->n2.nic3 n2.nic3->n2.pcie1 "
        "n2.pcie1->n2.gpu3");
  CHECK(route_names(rail, "n0.gpu2", "n2.gpu2") ==
        "n0.gpu2->n0.pcie1 n0.pcie1->n0.nic2 n0.nic2->rail2 rail2->n2.nic2 n2.nic2->n2.pcie1 "
        "n2.pcie1->n2.gpu2");
  // Across rails no route of the shortest length goes through both own NICs (that would take
  // the spine), so the source's wins: out on rail 3, in through n1.nic3, gpu2's PCIe neighbour.
  CHECK(route_names(rail, "n0.gpu3", "n1.gpu2") ==
        "n0.gpu3->n0.pcie1 n0.pcie1->n0.nic3 n0.nic3->rail3 rail3->n1.nic3 n1.nic3->n1.pcie1 "
        "n1.pcie1->n1.gpu2");
  // Both ends through their own NICs across the fat tree.
  CHECK(route_names(ft, "n0.gpu3", "n1.gpu3") ==
        "n0.gpu3->n0.pcie1 n0.pcie1->n0.nic3 n0.nic3->leaf0 leaf0->spine0 spine0->leaf1 "
        "leaf1->n1.nic3 n1.nic3->n1.pcie1 n1.pcie1->n1.gpu3");
  // One GPU per PCIe switch pins each GPU to its own NIC and rail.
  p.node.gpus_per_pcie_switch = 1;
  Topology rail1 = build_cluster(p);
  CHECK(route_names(rail1, "n0.gpu3", "n2.gpu3") ==
        "n0.gpu3->n0.pcie3 n0.pcie3->n0.nic3 n0.nic3->rail3 rail3->n2.nic3 n2.nic3->n2.pcie3 "
        "n2.pcie3->n2.gpu3");
}

TEST_CASE("builders refuse out-of-range parameters") {
  ClusterParams p;
  p.nodes = 131073;  // one node past 2^20 GPUs
  CHECK_THROWS_WITH_AS(build_cluster(p),
                       "131073 nodes x 8 GPUs = 1048584 GPUs is more than the limit of 1048576 "
                       "(kMaxTopologyGpus in topologies/topology_builders.h: raise it and rebuild)",
                       std::invalid_argument);
  NodeParams n;
  n.gpus_per_pcie_switch = 0;
  CHECK_THROWS_AS(build_single_node(n), std::invalid_argument);
}

TEST_CASE("copies are independent") {
  Topology a = build_single_node(NodeParams{});
  (void)a.route(0, 1);
  Topology b = a;
  b.add_vertex("extra", VertexKind::Host);
  CHECK(a.vertex_count() + 1 == b.vertex_count());
  CHECK(b.route(0, 1)->links == a.route(0, 1)->links);
}

TEST_CASE("ECMP: routes across a fat tree spread over its spines, each still a shortest route") {
  ClusterParams p;
  p.nodes = 8;
  p.shape = NetworkShape::FatTree;
  p.switch_radix = 16;  // 8 NICs per leaf: one leaf per node, 8 spines
  const Topology spread = build_cluster(p);
  Topology lowest = spread;
  lowest.set_ecmp(false);
  REQUIRE(spread.ecmp());
  auto time_of = [](const Topology& t, const Route& r) {
    Time sum;
    for (LinkId l : r.links)
      sum += t.link_latency(l) + transfer_time(Bytes(std::int64_t{1} << 20), t.link_bandwidth(l));
    return sum;
  };
  std::set<std::string> uplinks;  // leaf0's links up to a spine used by node 0's GPUs
  for (int g = 0; g < 8; ++g) {
    for (int n = 1; n < 8; ++n) {
      const VertexId a = *spread.find("n0.gpu" + std::to_string(g));
      const VertexId b = *spread.find("n" + std::to_string(n) + ".gpu" + std::to_string(g));
      const Route r = *spread.route(a, b);
      const Route base = *lowest.route(a, b);
      CHECK(time_of(spread, r) == time_of(lowest, base));  // as short
      CHECK(r.links.size() == base.links.size());
      CHECK(spread.route(a, b)->links == r.links);  // deterministic
      for (LinkId l : r.links) {
        if (spread.link_name(l).rfind("leaf0->spine", 0) == 0) uplinks.insert(spread.link_name(l));
      }
      // Without ECMP every one of them goes up to spine0.
      CHECK(lowest.link_name(base.links[3]) == "leaf0->spine0");
    }
  }
  // 56 routes over 8 uplinks: a hash spreads them over (nearly) all, as switches do.
  CHECK(uplinks.size() >= 7);
}

}  // namespace
}  // namespace bubblesim
