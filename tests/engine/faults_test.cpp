// Simulated faults: stragglers (per-device compute slowdown) and link faults (degraded or cut).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine_test_support.h"
#include "topologies/topology.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

// 1F1B with uniform T_F = a, T_B = b (no W), no communication, m >= p, device r slowed by k >= 1.
// The makespan is the longest path of the op DAG. Device r runs all of its 2m ops back to back
// once it has started (its 1F1B order keeps it busy: between F_i and B_i it has w = p-1-r
// forwards and backwards of its own, k*w*(a+b) >= the w*(a+b) round trip downstream), which
// gives the path r*a (forwards reaching it) + k*m*(a+b) + r*b (the last backward leaving it).
// Two detours through the faster downstream devices can be longer than staying on device r:
//  - warm-up: after F_0, device r would run w forwards (k*w*a) before B_0, but B_0 comes back
//    only after w*(a+b); the path gains w*(a+b-k*a) when that is positive;
//  - cool-down: between F_{m-1} and B_{m-1} device r runs w backwards (k*w*b) while the round
//    trip takes w*(a+b); the path gains w*(a+b-k*b) when positive.
// So  T(k, r) = r(a+b) + k m (a+b) + (p-1-r) [max(0, a+b-k a) + max(0, a+b-k b)],
// which is (m+p-1)(a+b) at k = 1.
double one_f_one_b_straggler_ms(int p, int m, int r, double k, double a, double b) {
  const int w = p - 1 - r;
  return r * (a + b) + k * m * (a + b) +
         w * (std::max(0.0, a + b - k * a) + std::max(0.0, a + b - k * b));
}

SimulationResult replay_slowed(const Table& t, const StageCost& c, int r, double k) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages, c).for_table(1);
  in.compute_slowdown.assign(static_cast<std::size_t>(t.devices), 1.0);
  in.compute_slowdown[static_cast<std::size_t>(r)] = k;
  return simulate(in);
}

}  // namespace

TEST_CASE("a 1.5x straggler raises 1F1B's makespan exactly as the critical path predicts") {
  struct Case {
    int p, m;
    double a, b;
  };
  for (Case cs : {Case{4, 8, 1.0, 2.0}, Case{4, 4, 2.0, 2.0}, Case{6, 10, 1.0, 3.0},
                  Case{8, 16, 2.0, 1.0}, Case{3, 7, 4.0, 1.0}}) {
    const StageCost c = stage_cost_ms(cs.a, cs.b, 0.0);
    const Table t = generate("1f1b", cs.p, cs.m, c);
    const SimulationResult healthy = replay(t, c);
    REQUIRE(healthy.status == RunStatus::Ok);
    CHECK(healthy.metrics.makespan.milliseconds() ==
          doctest::Approx(one_f_one_b_straggler_ms(cs.p, cs.m, 0, 1.0, cs.a, cs.b)));
    for (int r = 0; r < cs.p; ++r) {
      for (double k : {1.5, 2.0, 1.25}) {
        CAPTURE(cs.p);
        CAPTURE(cs.m);
        CAPTURE(r);
        CAPTURE(k);
        const SimulationResult slow = replay_slowed(t, c, r, k);
        REQUIRE(slow.status == RunStatus::Ok);
        CHECK(
            slow.metrics.makespan.milliseconds() ==
            doctest::Approx(one_f_one_b_straggler_ms(cs.p, cs.m, r, k, cs.a, cs.b)).epsilon(1e-12));
        CHECK(slow.metrics.makespan > healthy.metrics.makespan);
      }
    }
  }
}

TEST_CASE("a straggler slows only compute: busy time of the slowed device scales by k") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 0.0);
  const Table t = generate("1f1b", 4, 8, c);
  const SimulationResult slow = replay_slowed(t, c, 2, 1.5);
  REQUIRE(slow.status == RunStatus::Ok);
  CHECK(slow.metrics.busy_per_device[2] == Time::from_seconds(8 * 3e-3 * 1.5));
  CHECK(slow.metrics.busy_per_device[1] == Time::from_seconds(8 * 3e-3));
}

namespace {

// Two GPUs joined by one link of 1 GB/s and 1 us latency.
Topology two_gpus() {
  Topology topo;
  VertexId g0 = topo.add_vertex("gpu0", VertexKind::Gpu);
  VertexId g1 = topo.add_vertex("gpu1", VertexKind::Gpu);
  topo.add_link(g0, g1, Bandwidth::bytes_per_second(1e9), Time::from_seconds(1e-6));
  return topo;
}

SimulationResult replay_with_link_faults(const Table& t, const StageCost& c, const Topology& topo,
                                         std::vector<LinkFault> faults) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages, c).for_table(1);
  in.network = TopologyNetwork{&topo, {0, 1}};
  in.link_faults = std::move(faults);
  return simulate(in);
}

std::vector<LinkFault> both_directions(const Topology& topo, Time at, double bytes_per_second) {
  std::vector<LinkFault> out;
  for (LinkId l = 0; l < topo.link_count(); ++l) out.push_back(LinkFault{l, at, bytes_per_second});
  return out;
}

}  // namespace

TEST_CASE("a degraded link slows the transfers that cross it after the fault") {
  StageCost c = stage_cost_ms(1.0, 2.0, 0.0);
  c.p2p = Bytes(200'000);  // 0.2 ms at 1 GB/s, 0.4 ms degraded: transfers never overlap
  const Table t = generate("gpipe", 2, 4, c);
  const Topology topo = two_gpus();
  const SimulationResult healthy = replay_with_link_faults(t, c, topo, {});
  REQUIRE(healthy.status == RunStatus::Ok);
  // Degraded to half from the start: every transfer takes 0.4 ms instead of 0.2 ms.
  const SimulationResult degraded =
      replay_with_link_faults(t, c, topo, both_directions(topo, Time::zero(), 5e8));
  REQUIRE(degraded.status == RunStatus::Ok);
  CHECK(degraded.metrics.makespan > healthy.metrics.makespan);
  // A fault after the end changes nothing.
  const SimulationResult late = replay_with_link_faults(
      t, c, topo, both_directions(topo, healthy.metrics.makespan + Time::from_seconds(1), 5e8));
  CHECK(late.metrics.makespan == healthy.metrics.makespan);
  // GPipe on 2 devices: the critical path crosses the link twice (the first forward's activation,
  // the first backward's gradient); each crossing is 0.2 ms longer.
  CHECK(degraded.metrics.makespan - healthy.metrics.makespan == Time::from_seconds(0.4e-3));
}

TEST_CASE("a link cut while a transfer crosses it ends as a deadlock naming the stalled transfer") {
  StageCost c = stage_cost_ms(1.0, 2.0, 0.0);
  c.p2p = Bytes(1'000'000);
  const Table t = generate("gpipe", 2, 4, c);
  const Topology topo = two_gpus();
  // The first forward ends at 1 ms; its activation is on the wire until 2 ms: cut at 1.5 ms.
  const SimulationResult cut =
      replay_with_link_faults(t, c, topo, both_directions(topo, Time::from_seconds(1.5e-3), 0.0));
  CHECK(cut.status == RunStatus::Deadlock);
  CHECK(cut.failure.find("stalled on a cut link") != std::string::npos);
  CHECK(cut.failure.find("transfer F0.0 (device 0) -> F1.0 (device 1)") != std::string::npos);
}
