// Blocking point-to-point and whole iterations (sim/engine/iteration_plan.h, docs/iterations.md),
// against timelines worked out by hand.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine_test_support.h"
#include "sim/engine/components/host_gap/host_gap.h"
#include "sim/engine/components/send_hold/send_hold.h"
#include "sim/engine/observer.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

Time ms(double v) { return Time::from_seconds(v * 1e-3); }

// 1F1B, p = 2, m = 2, F = B = 1 ms (no W): device 0 runs F0.0 F0.1 B0.0 B0.1, device 1
// F1.0 B1.0 F1.1 B1.1.
Table two_by_two() { return generate("1f1b", 2, 2, stage_cost_ms(1, 1, 0)); }

EngineInput input_for(const Table& t, NetworkSpec network = NoCostNetwork{}) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(2, stage_cost_ms(1, 1, 0)).for_table(1);
  in.network = std::move(network);
  return in;
}

struct CollectiveLog : EngineObserver {
  std::vector<CollectiveEvent> events;
  std::vector<HoldEvent> holds;
  void on_collective(const CollectiveEvent& e) override { events.push_back(e); }
  void on_send_hold(const HoldEvent& e) override {
    holds.push_back(HoldEvent{e.device, e.position, e.op, e.start, e.end, e.host_gap});
  }
};

}  // namespace

TEST_CASE("blocking p2p holds the sender's compute stream until its send has arrived") {
  const Table t = two_by_two();
  EngineInput in = input_for(t, FixedDelayNetwork{ms(0.5)});
  const SimulationResult async = simulate(in);
  set_p2p(in, "blocking");
  Engine engine(in);
  CollectiveLog log;
  engine.add_observer(&log);
  const SimulationResult blocking = engine.run();
  REQUIRE(async.status == RunStatus::Ok);
  REQUIRE(blocking.status == RunStatus::Ok);
  // Async: F0.1 follows F0.0 at once. Blocking: F0.0's send to device 1 holds device 0 until
  // it arrives at 1.5 ms.
  CHECK(async.timings[0][1].start == ms(1));
  CHECK(blocking.timings[0][1].start == ms(1.5));
  // Device 1: F1.0 [1.5, 2.5]; B1.0 [2.5, 3.5], sent back (held until 4); F1.1 waits for F0.1
  // (ends 2.5, arrives 3) and for the hold: [4, 5]; B1.1 [5, 6] held until 6.5.
  CHECK(blocking.timings[1][2].start == ms(4));
  // Device 0: B0.0 needs B1.0's gradient (arrives 4): [4, 5]; B0.1 needs B1.1 (6.5): [6.5, 7.5].
  CHECK(blocking.timings[0][3].end == ms(7.5));
  CHECK(blocking.metrics.makespan == ms(7.5));
  CHECK(blocking.metrics.makespan > async.metrics.makespan);
  // The holds are reported, and counted per device, in the blocking sends' own record.
  CHECK(blocked_sends(async.metrics) == nullptr);
  REQUIRE(blocked_sends(blocking.metrics) != nullptr);
  const std::vector<Time>& held = blocked_sends(blocking.metrics)->per_device;
  CHECK(held[0] == ms(1.0));  // F0.0, F0.1: 0.5 ms each
  CHECK(held[1] == ms(1.0));  // B1.0, B1.1
  REQUIRE(log.holds.size() == 4);
  CHECK(log.holds[0].device == 0);
  CHECK(log.holds[0].start == ms(1));
  CHECK(log.holds[0].end == ms(1.5));
}

TEST_CASE("a host gap after each blocking p2p call delays the op that follows it") {
  const Table t = two_by_two();
  EngineInput in = input_for(t, FixedDelayNetwork{ms(0.5)});
  set_p2p(in, "blocking", ms(0.25));
  Engine engine(in);
  CollectiveLog log;
  engine.add_observer(&log);
  const SimulationResult r = engine.run();
  REQUIRE(r.status == RunStatus::Ok);
  // Device 0: F0.0 [0, 1] (no call before it), held until its send arrives (1.5); F0.1 after
  // the gap [1.75, 2.75], held until 3.25; B0.0's input arrives 4.25: [4.5, 5.5]; B0.1's at 7:
  // [7.25, 8.25]. Device 1: F1.0 [1.75, 2.75]; B1.0 [2.75, 3.75] (no call between them), held
  // until 4.25; F1.1 [4.5, 5.5]; B1.1 [5.5, 6.5], held until 7.
  CHECK(r.timings[0][0].start == Time::zero());
  CHECK(r.timings[0][1].start == ms(1.75));
  CHECK(r.timings[0][2].start == ms(4.5));
  CHECK(r.timings[0][3].start == ms(7.25));
  CHECK(r.timings[1][0].start == ms(1.75));
  CHECK(r.timings[1][1].start == ms(2.75));
  CHECK(r.timings[1][2].start == ms(4.5));
  CHECK(r.timings[1][3].start == ms(5.5));
  CHECK(r.metrics.makespan == ms(8.25));
  REQUIRE(host_gaps(r.metrics) != nullptr);
  CHECK(host_gaps(r.metrics)->per_device[0] == ms(0.75));
  CHECK(host_gaps(r.metrics)->per_device[1] == ms(0.5));
  // The gap is not counted as exposed communication; the holds and data in flight still are:
  // device 0 is held 0.5 + 0.5 ms and waits 0.5 ms for each gradient in flight (B1.0's ends
  // 3.75, arrives 4.25; B1.1's 6.5, 7), its three gaps excluded.
  CHECK(r.metrics.comm.exposed_comm_per_device[0] == ms(2.0));
  // Nor as waiting for a reload (there is none).
  CHECK(r.metrics.offload.exposed_offload == Time::zero());
  const auto gaps = std::count_if(log.holds.begin(), log.holds.end(),
                                  [](const HoldEvent& e) { return e.host_gap; });
  CHECK(gaps == 5);
  CHECK(log.holds.size() == 4 + 5);
  // With async p2p there is no synchronisation and no gap (the host gaps are not engaged).
  set_p2p(in, "async", ms(0.25));
  const SimulationResult async = simulate(in);
  set_p2p(in, "async");
  CHECK(async.metrics.makespan == simulate(in).metrics.makespan);
  CHECK(host_gaps(async.metrics) == nullptr);
}

TEST_CASE("blocking p2p without a network (the idealized table) changes nothing") {
  const Table t = two_by_two();
  EngineInput in = input_for(t);
  const SimulationResult plain = simulate(in);
  set_p2p(in, "blocking");
  const SimulationResult blocking = simulate(in);
  CHECK(plain.metrics.makespan == blocking.metrics.makespan);
  REQUIRE(blocked_sends(blocking.metrics) != nullptr);
  for (Time held : blocked_sends(blocking.metrics)->per_device) CHECK(held == Time::zero());
}

TEST_CASE("one iteration: the iteration time is the makespan plus what ends the iteration") {
  const Table t = two_by_two();
  EngineInput in = input_for(t);
  // Device 0 ends at 6 ms, device 1 at 5 ms.
  SimulationResult r = simulate(in);
  CHECK(r.metrics.makespan == ms(6));
  CHECK(r.metrics.iteration.iteration_time == ms(6));
  in.iterations.optimizer_step = {ms(0.25), ms(2)};
  r = simulate(in);
  CHECK(r.metrics.makespan == ms(6));  // one iteration's makespan: the table's ops
  // Global barrier (the default) at 6 ms, then the steps: device 1 ends at 8 ms.
  CHECK(r.metrics.iteration.iteration_time == ms(8));
}

TEST_CASE("two iterations: a global barrier against each device starting on its own") {
  const Table t = two_by_two();
  EngineInput in = input_for(t);
  in.iterations.count = 2;
  in.iterations.optimizer_step = {Time::zero(), ms(2)};
  // Global: barrier at 6; device 0 starts again at 6, device 1 at 8. Iteration 2: F0.0 [6, 7],
  // F0.1 [7, 8], F1.0 [8, 9], B1.0 [9, 10], F1.1 [10, 11], B1.1 [11, 12], B0.0 [10, 11],
  // B0.1 [12, 13]; barrier at 13, device 1's step ends at 15. Period: 15 - 8 = 7.
  in.iterations.barrier = IterationBarrier::Global;
  SimulationResult global = simulate(in);
  CHECK(global.metrics.iteration.iterations == 2);
  CHECK(global.metrics.iteration.iteration_time == ms(7));
  // None: device 0 starts again at 6, device 1 at 5 + 2 = 7. Iteration 2: F0.0 [6, 7],
  // F0.1 [7, 8], F1.0 [7, 8], B1.0 [8, 9], F1.1 [9, 10], B1.1 [10, 11]; B0.0 [9, 10],
  // B0.1 [11, 12]. Ends: device 0 at 12, device 1 at 11 + 2 = 13. Period: 13 - 7 = 6.
  in.iterations.barrier = IterationBarrier::None;
  SimulationResult none = simulate(in);
  CHECK(none.metrics.iteration.iteration_time == ms(6));
  // The first iteration's metrics are the same either way.
  CHECK(none.metrics.makespan == global.metrics.makespan);
  const auto a = none.timings.all(), b = global.timings.all();
  CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

TEST_CASE("a tied-embedding sync makes its two devices wait for each other") {
  const Table t = two_by_two();
  EngineInput in = input_for(t);
  in.iterations.barrier = IterationBarrier::None;
  in.iterations.pair_syncs = {PairSync{"tied-embedding all-reduce", 0, 1, ms(0.5)}};
  Engine engine(in);
  CollectiveLog log;
  engine.add_observer(&log);
  const SimulationResult r = engine.run();
  // Device 1 is ready at 5 ms, device 0 at 6 ms: the all-reduce runs [6, 6.5] for both.
  CHECK(r.metrics.iteration.iteration_time == ms(6.5));
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].name == "tied-embedding all-reduce");
  CHECK(log.events[1].device == 1);
  CHECK(log.events[1].start == ms(5));
  CHECK(log.events[1].end == ms(6.5));
}

TEST_CASE("iterations that are shifted copies are not replayed, and give the same period") {
  const Table t = generate("1f1b", 4, 8, stage_cost_ms(1, 2, 0));
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(4, stage_cost_ms(1, 2, 0)).for_table(1);
  in.network = FixedDelayNetwork{ms(0.1)};
  in.iterations.count = 3;
  in.iterations.optimizer_step.assign(4, ms(1.5));
  in.iterations.barrier_duration = ms(0.2);
  const SimulationResult shortcut = simulate(in);
  // The same plan with steps that differ by a picosecond on one device forces the replays.
  in.iterations.optimizer_step[3] += Time::from_ps(1);
  const SimulationResult replayed = simulate(in);
  CHECK(shortcut.metrics.iteration.iteration_time == shortcut.metrics.makespan + ms(1.7));
  CHECK(shortcut.metrics.iteration.iterations == 3);
  CHECK(shortcut.metrics.iteration.replays == 1);
  // Device 3's later start is absorbed (it waits for F2.0 anyway): the same period, replayed.
  CHECK(replayed.metrics.iteration.replays == 3);
  CHECK(replayed.metrics.iteration.iteration_time == shortcut.metrics.iteration.iteration_time);
}

TEST_CASE("later iterations replay the same by list scheduling and by the event loop") {
  for (const char* name : {"1f1b", "zb-h1", "interleaved-1f1b"}) {
    CAPTURE(name);
    ParamValues params;
    if (std::string(name) == "interleaved-1f1b") params.set("chunks", std::int64_t{2});
    const StageCost c = stage_cost_ms(1, 1.2, 0.6);
    const Table t = generate(name, 4, 8, c, params);
    EngineInput in;
    in.table = &t;
    in.stage_costs = CostProfile::uniform(4, c).for_table(t.chunks);
    in.network = FixedDelayNetwork{ms(0.05)};
    in.iterations.count = 3;
    in.iterations.barrier = IterationBarrier::None;
    in.iterations.optimizer_step = {ms(0.3), ms(0.1), ms(0.2), ms(0.4)};
    const SimulationResult list = simulate(in);
    in.path = ReplayPath::EventLoop;
    const SimulationResult loop = simulate(in);
    CHECK(list.metrics.iteration.replays == 3);
    CHECK(list.metrics.iteration.iteration_time == loop.metrics.iteration.iteration_time);
    // Without a barrier the period is shorter than the first iteration's makespan plus a step.
    CHECK(list.metrics.iteration.iteration_time < list.metrics.makespan + ms(0.4));
  }
}
