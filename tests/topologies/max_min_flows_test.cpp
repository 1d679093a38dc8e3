#include "sim/engine/max_min_flows.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/units/overflow_error.h"
#include "topologies/topology_builders.h"

namespace bubblesim {
namespace {

Time s(std::int64_t n) { return Time::from_ps(n * 1'000'000'000'000); }
Time ms(std::int64_t n) { return Time::from_ps(n * 1'000'000'000); }
using Ids = std::vector<MaxMinFlows::FlowId>;

TEST_CASE("one flow alone runs at link capacity and finishes exactly") {
  MaxMinFlows net({1e9});
  auto f = net.add({0}, 1e9, Time::zero());
  CHECK(net.rate(f) == 1e9);
  CHECK(net.next_completion() == s(1));
  CHECK(net.complete_finished(s(1) - Time::from_ps(1)).empty());
  CHECK(net.complete_finished(s(1)) == Ids{f});
  CHECK(net.active_flows() == 0);
  CHECK_FALSE(net.next_completion().has_value());
  CHECK(net.link_busy_time(0) == s(1));
  CHECK(net.link_bytes(0) == doctest::Approx(1e9));
}

TEST_CASE("a weighted flow gets the bandwidth of that many flows") {
  // Link 0 is shared; link 1 is only the weighted flow's. Weight 3 beside a plain flow: 3/4 and
  // 1/4 of link 0, as three plain flows and one would get.
  MaxMinFlows net({1e9, 1e12});
  auto heavy = net.add({0, 1}, 3e9, Time::zero(), 3.0);
  auto light = net.add({0}, 1e9, Time::zero());
  CHECK(net.rate(heavy) == doctest::Approx(7.5e8));
  CHECK(net.rate(light) == doctest::Approx(2.5e8));
  // Both finish together at 4 s, as four plain flows of 1 GB would.
  CHECK(net.next_completion() == s(4));
  CHECK(net.complete_finished(s(4)) == Ids{heavy, light});
  // A weighted flow limited elsewhere leaves the rest to the others (progressive filling).
  MaxMinFlows capped({1e9, 1e8});
  auto slow = capped.add({0, 1}, 1e8, Time::zero(), 4.0);
  auto fast = capped.add({0}, 9e8, Time::zero());
  CHECK(capped.rate(slow) == doctest::Approx(1e8));
  CHECK(capped.rate(fast) == doctest::Approx(9e8));
  CHECK_THROWS_AS(capped.add({0}, 1e6, Time::zero(), 0.0), std::invalid_argument);
}

TEST_CASE("two flows on one link each get half and take twice as long") {
  MaxMinFlows net({1e9});
  auto a = net.add({0}, 1e9, Time::zero());
  auto b = net.add({0}, 1e9, Time::zero());
  CHECK(net.rate(a) == 5e8);
  CHECK(net.rate(b) == 5e8);
  CHECK(net.next_completion() == s(2));
  CHECK(net.complete_finished(s(2)) == Ids{a, b});
  CHECK(net.link_busy_time(0) == s(2));
}

TEST_CASE("a flow limited elsewhere leaves its unused share to the other") {
  // Link A (0) capacity 10, link B (1) capacity 4; flow1 over A+B, flow2 over A.
  MaxMinFlows net({10.0, 4.0});
  auto f1 = net.add({0, 1}, 40.0, Time::zero());
  auto f2 = net.add({0}, 60.0, Time::zero());
  CHECK(net.rate(f1) == 4.0);
  CHECK(net.rate(f2) == 6.0);
  CHECK(net.next_completion() == s(10));
  CHECK(net.complete_finished(s(10)) == Ids{f1, f2});
  CHECK(net.link_bytes(0) == doctest::Approx(100.0));
  CHECK(net.link_bytes(1) == doctest::Approx(40.0));
}

TEST_CASE("rates rise when a flow finishes; completion times stay exact") {
  MaxMinFlows net({10.0});
  auto a = net.add({0}, 10.0, Time::zero());  // 5/s until t=2
  auto b = net.add({0}, 20.0, Time::zero());  // 5/s until t=2 (10 left), then 10/s: t=3
  CHECK(net.next_completion() == s(2));
  CHECK(net.complete_finished(s(2)) == Ids{a});
  CHECK(net.rate(b) == 10.0);
  CHECK(net.remaining_bytes(b) == doctest::Approx(10.0));
  CHECK(net.next_completion() == s(3));
  CHECK(net.complete_finished(s(3)) == Ids{b});
}

TEST_CASE("a late arrival slows the flow already running") {
  MaxMinFlows net({100.0});
  auto a = net.add({0}, 100.0, Time::zero());
  CHECK(net.next_completion() == s(1));
  auto b = net.add({0}, 25.0, ms(500));  // a has 50 left; both at 50/s
  CHECK(net.rate(a) == 50.0);
  CHECK(net.next_completion() == ms(1000));  // b: 25 at 50/s
  CHECK(net.complete_finished(ms(1000)) == Ids{b});
  CHECK(net.rate(a) == 100.0);  // a: 25 left at 100/s
  CHECK(net.next_completion() == ms(1250));
  CHECK(net.complete_finished(ms(1250)) == Ids{a});
  CHECK(net.link_busy_time(0) == ms(1250));
}

TEST_CASE("completion rounds up to a whole picosecond") {
  MaxMinFlows net({3e12});                    // 3 bytes per ps
  auto f = net.add({0}, 10.0, Time::zero());  // 3.33 ps
  CHECK(net.next_completion() == Time::from_ps(4));
  CHECK(net.complete_finished(Time::from_ps(4)) == Ids{f});
}

TEST_CASE("independent flows do not affect each other; busy time counts only moving periods") {
  MaxMinFlows net({10.0, 10.0});
  auto a = net.add({0}, 100.0, Time::zero());  // 10s alone on link 0
  auto b = net.add({1}, 10.0, Time::zero());
  auto c = net.add({1}, 10.0, Time::zero());
  CHECK(net.rate(a) == 10.0);
  CHECK(net.rate(b) == 5.0);
  CHECK(net.next_completion() == s(2));
  CHECK(net.complete_finished(s(2)) == Ids{b, c});
  CHECK(net.rate(a) == 10.0);
  auto d = net.add({1}, 10.0, s(4));  // link 1 idle from 2s to 4s
  CHECK(net.next_completion() == s(5));
  CHECK(net.complete_finished(s(5)) == Ids{d});
  CHECK(net.complete_finished(s(10)) == Ids{a});
  CHECK(net.link_busy_time(0) == s(10));
  CHECK(net.link_busy_time(1) == s(3));
  CHECK(net.link_bytes(1) == doctest::Approx(30.0));
}

TEST_CASE("cut and restored link capacity") {
  MaxMinFlows net({10.0, 10.0});
  auto f = net.add({0, 1}, 20.0, Time::zero());
  net.set_link_capacity(1, 0.0, s(1));  // 10 bytes moved
  CHECK(net.rate(f) == 0.0);
  CHECK_FALSE(net.next_completion().has_value());
  net.set_link_capacity(1, 5.0, s(3));
  CHECK(net.rate(f) == 5.0);
  CHECK(net.next_completion() == s(5));
  CHECK(net.complete_finished(s(5)) == Ids{f});
  CHECK(net.link_busy_time(0) == s(3));  // moving 0..1 and 3..5
}

TEST_CASE("a flow too slow to end within the time range is an overflow, not a cut link") {
  // 10 MB at 1 B/s needs 1e7 s; picosecond time ends at about 9.2e6 s. Before, the flow got
  // "never" (Time::max()) and the replay called it a deadlock on a cut link.
  MaxMinFlows net({1.0});
  CHECK_THROWS_AS(net.add({0}, 1e7, Time::zero()), OverflowError);
  MaxMinFlows fits({1.0});
  auto f = fits.add({0}, 9e6, Time::zero());
  CHECK(fits.next_completion() == s(9'000'000));
  CHECK(fits.complete_finished(s(9'000'000)) == Ids{f});
}

TEST_CASE("bad calls are refused") {
  MaxMinFlows net({1.0});
  CHECK_THROWS_AS(net.add({}, 1.0, Time::zero()), std::invalid_argument);
  CHECK_THROWS_AS(net.add({1}, 1.0, Time::zero()), std::invalid_argument);
  CHECK_THROWS_AS(net.add({0, 0}, 1.0, Time::zero()), std::invalid_argument);
  CHECK_THROWS_AS(net.add({0}, 0.0, Time::zero()), std::invalid_argument);
  net.add({0}, 1.0, s(1));
  CHECK_THROWS_AS(net.add({0}, 1.0, Time::zero()), std::logic_error);
  CHECK_THROWS_AS(net.rate(99), std::out_of_range);
  CHECK_THROWS_AS(MaxMinFlows({-1.0}), std::invalid_argument);
}

TEST_CASE("flows over topology routes share the NVSwitch links") {
  NodeParams p;
  p.nvlink.bandwidth = Bandwidth::bytes_per_second(400e9);
  Topology t = build_single_node(p);
  MaxMinFlows net = MaxMinFlows::for_topology(t);
  auto r01 = *t.route(*t.find("gpu0"), *t.find("gpu1"));
  auto r02 = *t.route(*t.find("gpu0"), *t.find("gpu2"));
  auto r31 = *t.route(*t.find("gpu3"), *t.find("gpu1"));
  auto a = net.add(r01.links, Bytes(400'000'000), Time::zero());
  auto b = net.add(r02.links, Bytes(400'000'000), Time::zero());
  auto c = net.add(r31.links, Bytes(400'000'000), Time::zero());
  // gpu0->nvswitch0 is shared by a and b, nvswitch0->gpu1 by a and c: everyone gets half.
  CHECK(net.rate(a) == 200e9);
  CHECK(net.rate(b) == 200e9);
  CHECK(net.rate(c) == 200e9);
  CHECK(net.next_completion() == ms(2));
}

TEST_CASE("two GPUs of one PCIe switch sending across nodes each get a whole NIC") {
  // DGX layout: gpu2 and gpu3 share pcie1 with nic2 and nic3. Each GPU's traffic goes through its
  // own NIC, so both run at the NIC's 50 GB/s at once (through one NIC they would get half each).
  for (NetworkShape shape :
       {NetworkShape::SingleSwitch, NetworkShape::FatTree, NetworkShape::Rail}) {
    CAPTURE(static_cast<int>(shape));
    ClusterParams p;
    p.shape = shape;
    Topology t = build_cluster(p);
    REQUIRE(p.node.gpus_per_pcie_switch == 2);
    MaxMinFlows net = MaxMinFlows::for_topology(t);
    const double nic = p.nic.bandwidth.bytes_per_second();
    std::vector<MaxMinFlows::FlowId> flows;
    for (const char* gpu : {"gpu2", "gpu3"}) {
      for (auto [from, to] : {std::pair{"n0.", "n1."}, std::pair{"n1.", "n0."}}) {
        auto r = t.route(*t.find(from + std::string(gpu)), *t.find(to + std::string(gpu)));
        REQUIRE(r);
        flows.push_back(net.add(r->links, Bytes(500'000'000), Time::zero()));
      }
    }
    for (auto f : flows) CHECK(net.rate(f) == nic);
    CHECK(net.next_completion() == ms(10));
  }
}

TEST_CASE("identical inputs give identical outputs") {
  auto run = [] {
    MaxMinFlows net({7.0, 3.0, 11.0, 5.0});
    std::vector<Time> times;
    net.add({0, 1}, 13.0, Time::zero());
    net.add({1, 2}, 17.0, ms(100));
    net.add({2, 3}, 19.0, ms(250));
    net.add({0, 3}, 23.0, ms(300));
    while (auto t = net.next_completion()) {
      times.push_back(*t);
      net.complete_finished(*t);
    }
    return times;
  };
  auto first = run();
  CHECK(first.size() == 4);
  CHECK(first == run());
}

}  // namespace
}  // namespace bubblesim
