// Pins the exact output of a few replays (makespan, peaks, event count and a fingerprint of every
// op timing and metric) so that performance work on the engine and the flow network cannot change
// a result by a single picosecond or byte. The pinned values were recorded with the engine as it
// was before the performance work (docs/performance.md); a deliberate change of semantics must
// re-record them and say why in its commit.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "engine_test_support.h"
#include "result_fingerprint.h"
#include "schedules/passes/memory_passes.h"
#include "topologies/topology_builders.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

struct Pin {
  std::int64_t makespan_ps;
  std::int64_t peak_activation;
  std::uint64_t events;
  std::uint64_t fingerprint;
};

void check_pin(const SimulationResult& r, const Pin& pin, RunStatus status = RunStatus::Ok) {
  CHECK(r.status == status);
  const std::uint64_t fp = fingerprint(r);
  // On a mismatch, the line to paste (after making sure the change is intended).
  INFO(fmt::format("actual: {{{}, {}, {}, 0x{:016x}ull}}", r.metrics.makespan.ps(),
                   r.metrics.memory.peak_activation.count(), r.events, fp));
  CHECK(r.metrics.makespan.ps() == pin.makespan_ps);
  CHECK(r.metrics.memory.peak_activation.count() == pin.peak_activation);
  CHECK(r.events == pin.events);
  CHECK(fp == pin.fingerprint);
}

// Deliberately uneven costs so that ties and roundings are exercised.
StageCost uneven_cost() {
  StageCost c = stage_cost_ms(1.3, 2.1, 0.7, 3, 1);
  c.p2p = Bytes(5 << 20);
  c.static_memory = Bytes(std::int64_t{1} << 30);
  return c;
}

Table generate_with(const std::string& name, int p, int m, const StageCost& c,
                    std::int64_t chunks) {
  ParamValues params;
  if (chunks > 1) params.set("chunks", chunks);
  return generate(name, p, m, c, std::move(params));
}

const NetworkSpec kFixedDelay = FixedDelayNetwork{Time::from_seconds(0.13e-3)};

EngineInput input_for(const Table& t, const StageCost& c, NetworkSpec network) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages / t.chunks, c).for_table(t.chunks);
  in.network = std::move(network);
  return in;
}

// A star: every GPU has one link to and from a hub, so a device's forward activation and
// backward gradient leave over the same link and share it (max-min), and flows into a device
// share its downlink.
struct Star {
  Topology topology;
  std::vector<VertexId> gpus;
};

Star star(int p, double gbps) {
  Star s;
  VertexId hub = s.topology.add_vertex("hub", VertexKind::Switch);
  for (int d = 0; d < p; ++d) {
    VertexId g = s.topology.add_vertex(fmt::format("gpu{}", d), VertexKind::Gpu);
    s.topology.add_link(g, hub, Bandwidth::bytes_per_second(gbps * 1e9),
                        Time::from_seconds(1.5e-6));
    s.gpus.push_back(g);
  }
  return s;
}

// The benchmark's ring: neighbours on their own link, both directions.
Star ring(int p, double gbps) {
  Star s;
  for (int d = 0; d < p; ++d)
    s.gpus.push_back(s.topology.add_vertex(fmt::format("gpu{}", d), VertexKind::Gpu));
  for (int d = 0; d < p; ++d) {
    s.topology.add_link(s.gpus[static_cast<std::size_t>(d)],
                        s.gpus[static_cast<std::size_t>((d + 1) % p)],
                        Bandwidth::bytes_per_second(gbps * 1e9), Time::from_seconds(2e-6));
  }
  return s;
}

}  // namespace

TEST_CASE("pinned replay: 1f1b with fixed delay") {
  StageCost c = uneven_cost();
  Table t = generate_with("1f1b", 4, 12, c, 1);
  check_pin(simulate(input_for(t, c, kFixedDelay)),
            Pin{64360000000, 12582912, 168, 0xf3484896695347b6ull});
}

TEST_CASE("pinned replay: interleaved 1f1b (v = 2) with fixed delay") {
  StageCost c = uneven_cost();
  Table t = generate_with("interleaved-1f1b", 4, 8, c, 2);
  check_pin(simulate(input_for(t, c, kFixedDelay)),
            Pin{40770000000, 17301504, 240, 0xec912e8947b243ccull});
}

TEST_CASE("pinned replay: zb-v, both release conventions") {
  StageCost c = uneven_cost();
  Table t = generate_with("zb-v", 4, 10, c, 1);
  EngineInput in = input_for(t, c, kFixedDelay);
  check_pin(simulate(in), Pin{47280000000, 12582912, 360, 0x7d3ac1edc85565b0ull});
  in.release = ReleaseConvention::BackwardComplete;
  in.network = NoCostNetwork{};
  check_pin(simulate(in), Pin{45200000000, 12582912, 240, 0x7650b605c35f46d3ull});
}

TEST_CASE("pinned replay: dualpipe with fixed delay") {
  StageCost c = uneven_cost();
  Table t = generate_with("dualpipe", 4, 8, c, 1);
  check_pin(simulate(input_for(t, c, kFixedDelay)),
            Pin{37970000000, 15728640, 110, 0xd2352e19f2511545ull});
}

TEST_CASE("pinned replay: topology with link sharing") {
  StageCost c = uneven_cost();
  SUBCASE("1f1b on a star") {
    Table t = generate_with("1f1b", 6, 12, c, 1);
    Star s = star(6, 3.0);
    EngineInput in = input_for(t, c, TopologyNetwork{&s.topology, s.gpus});
    SimulationResult r = simulate(in);
    REQUIRE(r.metrics.comm.links.size() == 12);  // every up- and downlink carried traffic
    check_pin(r, Pin{123760426677, 18874368, 490, 0xe2dd7bb531cc7cf0ull});
  }
  SUBCASE("interleaved on a ring") {
    Table t = generate_with("interleaved-1f1b", 4, 8, c, 2);
    Star s = ring(4, 2.0);
    EngineInput in = input_for(t, c, TopologyNetwork{&s.topology, s.gpus});
    check_pin(simulate(in), Pin{115056953335, 17301504, 463, 0x6a11153a0d286bc5ull});
  }
  SUBCASE("zb-v on a two-node cluster") {
    Table t = generate_with("zb-v", 8, 16, c, 1);
    ClusterParams params;
    params.node.gpus = 4;
    params.nic.bandwidth = Bandwidth::bytes_per_second(4e9);
    Topology topo = build_cluster(params);
    EngineInput in = input_for(t, c, TopologyNetwork{&topo, topo.gpus()});
    // Re-recorded when routes began to leave through each GPU's own NIC (n0.gpu3 through nic3,
    // not its PCIe neighbour's nic2): same makespan, peak and events, other op timings.
    check_pin(simulate(in), Pin{98808089711, 25165824, 1965, 0x2c64ef0b78008188ull});
  }
}

TEST_CASE("pinned replay: offload copies over PCIe routes and private links, with an OOM") {
  StageCost c = uneven_cost();
  c.activation = Bytes(200 << 20);
  Table base = generate_with("1f1b", 4, 12, c, 1);
  std::vector<StageCost> costs = CostProfile::uniform(4, c).for_table(1);
  SimulationResult ideal = simulate(input_for(base, c, NoCostNetwork{}));
  TableTimings windows(ideal.timings.size());
  for (std::size_t d = 0; d < ideal.timings.size(); ++d) {
    for (const OpTiming& o : ideal.timings[d]) windows[d].push_back(OpWindow{o.start, o.end});
  }
  OffloadSettings settings;
  settings.policy = MemoryPolicy::Full;
  settings.d2h.assign(4, Bandwidth::bytes_per_second(64e9));
  settings.h2d.assign(4, Bandwidth::bytes_per_second(64e9));
  Table t = apply_offload_pass(base, costs, windows, settings).table;

  SUBCASE("topology") {
    NodeParams node;
    node.gpus = 4;
    node.pcie.bandwidth = Bandwidth::bytes_per_second(30e9);
    Topology topo = build_single_node(node);
    EngineInput in = input_for(t, c, TopologyNetwork{&topo, topo.gpus()});
    SimulationResult r = simulate(in);
    REQUIRE(r.metrics.offload.offloaded_bytes > Bytes::zero());
    check_pin(r, Pin{188667824187, 838860800, 460, 0x3f74f1fed7bd1b22ull});
  }
  SUBCASE("private links, a device budget and a host capacity") {
    EngineInput in = input_for(t, c, kFixedDelay);
    in.offload_bandwidth = Bandwidth::bytes_per_second(20e9);
    in.memory_budget.assign(4, Bytes(std::int64_t{1} << 30) + Bytes(500 << 20));
    in.host_capacity = Bytes(std::int64_t{1} << 30);
    SimulationResult r = simulate(in);
    REQUIRE(r.out_of_memory.size() >= 2);  // a device and the host
    check_pin(r, Pin{169974880000, 838860800, 218, 0xa0e11faee30c18faull}, RunStatus::OutOfMemory);
  }
}
