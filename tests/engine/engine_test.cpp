#include <doctest/doctest.h>

#include "engine_test_support.h"
#include "sim/engine/event_queue.h"

using namespace bubblesim;
using namespace bubblesim::testing;

TEST_CASE("event queue pops by time, then priority, then insertion order") {
  EventQueue q;
  q.push(Time::from_ps(5), 1, EventType::Arrival, 1);
  q.push(Time::from_ps(5), 0, EventType::OpEnd, 2);
  q.push(Time::from_ps(3), 2, EventType::Arrival, 3);
  q.push(Time::from_ps(5), 0, EventType::OpEnd, 4);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  CHECK(order == std::vector<std::uint32_t>{3, 2, 4, 1});
}

TEST_CASE("a table that can never finish is reported as a deadlock naming the blocked ops") {
  // Device 0 wants B0.0 before F0.1, device 1 wants F1.1 before B1.0: with 2 microbatches and
  // these orders the two devices wait on each other.
  Table t;
  t.devices = 2;
  t.stages = 2;
  t.microbatches = 2;
  t.placement = Placement::straight(2);
  t.device_ops = {{Op::forward(0, 0), Op::backward(0, 0), Op::forward(0, 1), Op::backward(0, 1)},
                  {Op::forward(1, 1), Op::forward(1, 0), Op::backward(1, 0), Op::backward(1, 1)}};
  StageCost c = stage_cost_ms(1, 1, 0);
  SimulationResult r = replay(t, c);
  CHECK(r.status == RunStatus::Deadlock);
  CHECK(r.failure.find("device 0 is blocked at B0.0 (position 1), waiting for B1.0 on device 1") !=
        std::string::npos);
  CHECK(r.failure.find("device 1 is blocked at F1.1 (position 0), waiting for F0.1 on device 0") !=
        std::string::npos);
}

TEST_CASE("split release frees M_B - M_W at B and M_W at W") {
  // One stage, one microbatch: F (alloc 4MiB), B frees 3MiB, W frees 1MiB.
  Table t;
  t.devices = 1;
  t.stages = 1;
  t.microbatches = 2;
  t.placement = Placement::straight(1);
  t.device_ops = {{Op::forward(0, 0), Op::backward(0, 0), Op::forward(0, 1), Op::weight(0, 0),
                   Op::backward(0, 1), Op::weight(0, 1)}};
  StageCost c = stage_cost_ms(1, 1, 1, 4, 1);
  SimulationResult r = replay(t, c);
  REQUIRE(r.status == RunStatus::Ok);
  // After B0.0: 1MiB; F0.1 adds 4MiB -> 5MiB peak.
  CHECK(r.metrics.memory.peak_activation == Bytes(5 * 1024 * 1024));
  CHECK(r.metrics.memory.peak_activation_units == doctest::Approx(1.25));
}

TEST_CASE("a memory budget below the need is an out_of_memory outcome, not a crash") {
  StageCost c = stage_cost_ms(1, 1, 0, 1024);  // 1GiB per microbatch per stage
  Table t = generate("1f1b", 4, 8, c);
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(4, c).for_table(1);
  in.memory_budget.assign(4, Bytes(3LL << 30));
  SimulationResult r = simulate(in);
  CHECK(r.status == RunStatus::OutOfMemory);
  REQUIRE(!r.out_of_memory.empty());
  CHECK(r.out_of_memory[0].device == 0);
  CHECK(r.out_of_memory[0].over == Bytes(1LL << 30));
  CHECK(r.out_of_memory[0].op == "F0.3");
  CHECK(r.metrics.makespan > Time::zero());  // the replay still finished
}

TEST_CASE("replays are deterministic") {
  StageCost c = stage_cost_ms(1.3, 2.1, 0.7, 3);
  Table t = generate("1f1b", 8, 32, c);
  SimulationResult a = replay(t, c, FixedDelayNetwork{Time::from_seconds(1e-4)});
  SimulationResult b = replay(t, c, FixedDelayNetwork{Time::from_seconds(1e-4)});
  CHECK(a.events == b.events);
  for (std::size_t d = 0; d < a.timings.size(); ++d) {
    for (std::size_t i = 0; i < a.timings[d].size(); ++i) {
      CHECK(a.timings[d][i].start == b.timings[d][i].start);
      CHECK(a.timings[d][i].end == b.timings[d][i].end);
    }
  }
}

TEST_CASE(
    "a topology link of bandwidth X and latency L equals fixed-delay bytes/X + L without sharing") {
  // Two GPUs joined by one link; each transfer (10ms) is shorter than the op that produces the
  // next one (20ms), so no two transfers share a link direction.
  Topology topo;
  VertexId g0 = topo.add_vertex("gpu0", VertexKind::Gpu);
  VertexId g1 = topo.add_vertex("gpu1", VertexKind::Gpu);
  topo.add_link(g0, g1, Bandwidth::bytes_per_second(10e9), Time::from_seconds(50e-6));
  StageCost c = stage_cost_ms(20, 40, 0);
  c.p2p = Bytes(100'000'000);  // 10ms at 10GB/s
  for (int m : {1, 4}) {
    Table t = generate("1f1b", 2, m, c);
    EngineInput in;
    in.table = &t;
    in.stage_costs = CostProfile::uniform(2, c).for_table(1);
    in.network = TopologyNetwork{&topo, {g0, g1}};
    SimulationResult flow = simulate(in);
    SimulationResult fixed = replay(t, c, FixedDelayNetwork{Time::from_seconds(10e-3 + 50e-6)});
    CAPTURE(m);
    CHECK(flow.status == RunStatus::Ok);
    CHECK(flow.metrics.makespan == fixed.metrics.makespan);
  }
}
