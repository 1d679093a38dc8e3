// Collectives as flows (sim/engine/collectives.h) and gradient sync inside the engine
// (sim/engine/gradient_sync.h) against the alpha-beta closed forms.
#include "sim/engine/collectives.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine_test_support.h"
#include "sim/engine/gradient_sync.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

// n GPUs on a bidirectional ring of links (bandwidth B, latency a), each with its own host (so
// every GPU is its own node).
Topology ring_topology(int n, double bandwidth, double latency_s) {
  Topology t;
  std::vector<VertexId> g;
  for (int i = 0; i < n; ++i) g.push_back(t.add_vertex("gpu" + std::to_string(i), VertexKind::Gpu));
  for (int i = 0; i < n; ++i) {
    t.add_link(g[static_cast<std::size_t>(i)], g[static_cast<std::size_t>((i + 1) % n)],
               Bandwidth::bytes_per_second(bandwidth), Time::from_seconds(latency_s));
  }
  return t;
}

double ring_formula(int n, double bytes, double bandwidth, double latency_s) {
  return 2.0 * (n - 1) * (bytes / (n * bandwidth) + latency_s);
}

}  // namespace

TEST_CASE("ring all-reduce on a ring of links takes 2(n-1)(S/(nB) + a)") {
  for (int n : {2, 4, 8}) {
    const double bytes = 1024.0 * 1024 * 1024, bw = 100e9, a = 5e-6;
    Topology t = ring_topology(n, bw, a);
    CollectiveTiming r = simulate_collective(t, t.gpus(), CollectiveKind::AllReduce,
                                             CollectiveAlgorithm::Ring, bytes);
    const double expected = ring_formula(n, bytes, bw, a);
    CHECK(r.simulated.seconds() == doctest::Approx(expected).epsilon(0.01));
    CHECK(r.closed_form.seconds() == doctest::Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("ring reduce-scatter and all-gather take half an all-reduce") {
  const double bytes = 256.0 * 1024 * 1024, bw = 50e9, a = 1e-6;
  Topology t = ring_topology(8, bw, a);
  auto rs = simulate_collective(t, t.gpus(), CollectiveKind::ReduceScatter,
                                CollectiveAlgorithm::Ring, bytes);
  auto ag =
      simulate_collective(t, t.gpus(), CollectiveKind::AllGather, CollectiveAlgorithm::Ring, bytes);
  CHECK(rs.simulated.seconds() == doctest::Approx(ring_formula(8, bytes, bw, a) / 2).epsilon(0.01));
  CHECK(ag.simulated == rs.simulated);
  CHECK(collective_steps(CollectiveKind::ReduceScatter, CollectiveAlgorithm::Ring, bytes,
                         {0, 1, 2, 3}, RingSteps::Stepped)
            .size() == 3);
}

TEST_CASE("a pipelined ring is one step of n flows carrying every step's bytes and latencies") {
  const double bytes = 64.0 * 1024 * 1024;
  const auto steps =
      collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, bytes, {0, 1, 2, 3});
  REQUIRE(steps.size() == 1);
  REQUIRE(steps[0].size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(steps[0][i].from == static_cast<std::int32_t>(i));
    CHECK(steps[0][i].to == static_cast<std::int32_t>((i + 1) % 4));
    CHECK(steps[0][i].bytes == doctest::Approx(6 * bytes / 4));  // 2(n - 1) chunks of S/n
    CHECK(steps[0][i].latencies == 6);
  }
  // On an idle ring both ways give the closed form 2(n-1)(S/(nB) + a).
  const double bw = 50e9, a = 3e-6;
  Topology t = ring_topology(8, bw, a);
  for (RingSteps mode : {RingSteps::Pipelined, RingSteps::Stepped}) {
    auto r = simulate_collective(t, t.gpus(), CollectiveKind::AllReduce, CollectiveAlgorithm::Ring,
                                 bytes, mode);
    CHECK(r.simulated.seconds() == doctest::Approx(ring_formula(8, bytes, bw, a)).epsilon(0.001));
  }
}

TEST_CASE("tree all-reduce through a switch takes 2 ceil(log2 n) (S/B + a)") {
  Topology t;
  VertexId sw = t.add_vertex("sw", VertexKind::Switch);
  for (int i = 0; i < 8; ++i) {
    VertexId g = t.add_vertex("gpu" + std::to_string(i), VertexKind::Gpu);
    t.add_link(g, sw, Bandwidth::bytes_per_second(40e9), Time::from_seconds(2e-6));
  }
  const double bytes = 64.0 * 1024 * 1024;
  auto r =
      simulate_collective(t, t.gpus(), CollectiveKind::AllReduce, CollectiveAlgorithm::Tree, bytes);
  const double expected = 2.0 * 3 * (bytes / 40e9 + 4e-6);  // route = 2 links
  CHECK(r.simulated.seconds() == doctest::Approx(expected).epsilon(0.01));
  CHECK(r.closed_form.seconds() == doctest::Approx(expected).epsilon(0.01));
  // Ring through the switch: 2(n-1)(S/(nB) + 2a).
  auto ring =
      simulate_collective(t, t.gpus(), CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, bytes);
  CHECK(ring.simulated.seconds() ==
        doctest::Approx(ring_formula(8, bytes, 40e9, 4e-6)).epsilon(0.01));
}

TEST_CASE(
    "hierarchical all-reduce: intra-node reduce-scatter, inter-node rings, intra-node all-gather") {
  auto steps = collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, 800.0,
                                {7, 7, 9, 9}, RingSteps::Stepped);
  // L = 2, N = 2: 1 RS step, 2 inter steps, 1 AG step.
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].size() == 4);
  CHECK(steps[0][0].bytes == doctest::Approx(400.0));
  CHECK(steps[1].size() == 4);  // two rings of two ranks
  CHECK(steps[1][0].bytes == doctest::Approx(200.0));
  CHECK(steps[1][0].from == 0);
  CHECK(steps[1][0].to == 2);
  // Unequal nodes fall back to a ring.
  CHECK(collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, 800.0,
                         {7, 7, 9}, RingSteps::Stepped)
            .size() == 4);
  // Pipelined: one step per phase.
  CHECK(collective_steps(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, 800.0,
                         {7, 7, 9, 9})
            .size() == 3);
  // Closed form with one node is the ring's.
  AlphaBeta ab{Bandwidth::bytes_per_second(1e9), Bandwidth::bytes_per_second(1e9),
               Time::from_seconds(1e-6), Time::from_seconds(1e-6)};
  CHECK(collective_closed_form(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical, 1e9, 4,
                               1, ab) == collective_closed_form(CollectiveKind::AllReduce,
                                                                CollectiveAlgorithm::Ring, 1e9, 4,
                                                                1, ab));
}

namespace {

struct SyncRun {
  SimulationResult result;
  Time ring;
};

// p = 1 pipeline on gpu0 of an 8-GPU ring; its stage is all-reduced with the 7 other replicas.
SimulationResult replay_dp(const Table& table, const StageCost& c, const Topology& topo,
                           std::vector<Bytes> gradient, bool overlap, Bytes bucket) {
  auto plan = std::make_shared<SyncPlan>();
  const auto gpus = topo.gpus();
  const auto dp = static_cast<std::size_t>(gpus.size()) / static_cast<std::size_t>(table.devices);
  plan->gpus.resize(static_cast<std::size_t>(table.devices));
  for (std::size_t d = 0; d < plan->gpus.size(); ++d) {
    for (std::size_t r = 0; r < dp; ++r)
      plan->gpus[d].push_back({gpus[r * static_cast<std::size_t>(table.devices) + d]});
  }
  plan->gradient_bytes = gradient;
  if (plan->gradient_bytes.size() == 1)
    plan->gradient_bytes.assign(static_cast<std::size_t>(table.stages), gradient[0]);
  plan->overlap.buckets = overlap;
  plan->end.bucket = bucket;
  EngineInput in;
  in.table = &table;
  in.stage_costs = CostProfile::uniform(table.stages / table.chunks, c).for_table(table.chunks);
  TopologyNetwork network{&topo, {}};
  for (std::size_t d = 0; d < plan->gpus.size(); ++d)
    network.device_vertex.push_back(plan->gpus[d][0][0]);
  in.network = std::move(network);
  in.sync = plan;
  return simulate(in);
}

}  // namespace

TEST_CASE("p = 1, dp = 8, no overlap: makespan = m (T_F + T_B + T_W) + the ring all-reduce") {
  const StageCost c = stage_cost_ms(1, 1, 1);
  const Table table = generate("1f1b", 1, 4, c);
  const double bw = 100e9, a = 5e-6;
  Topology topo = ring_topology(8, bw, a);
  const Bytes grad(1024LL * 1024 * 1024);
  SimulationResult r = replay_dp(table, c, topo, {grad}, false, Bytes(4LL * 1024 * 1024 * 1024));
  REQUIRE(r.status == RunStatus::Ok);
  const double ring = ring_formula(8, grad.as_double(), bw, a);
  CHECK(r.metrics.makespan.seconds() == doctest::Approx(4 * 3e-3 + ring).epsilon(0.001));
  CHECK(r.metrics.sync.dp_sync.seconds() == doctest::Approx(ring).epsilon(0.01));
  CHECK(r.metrics.sync.exposed_dp_sync == r.metrics.sync.dp_sync);
  REQUIRE(r.metrics.sync.collectives.size() == 1);
  CHECK(r.metrics.sync.collectives[0].closed_form.seconds() == doctest::Approx(ring).epsilon(0.01));
  CHECK_FALSE(r.metrics.sync.link_classes.empty());
}

TEST_CASE("overlap hides gradient buckets under the last backward and the drain") {
  // p = 4 on a 16-GPU ring (dp = 4); 1F1B's later stages finish their last backward before the
  // drain ends on device 0.
  const StageCost c = stage_cost_ms(1, 1, 1);
  const Table table = generate("1f1b", 4, 8, c);
  Topology topo = ring_topology(16, 400e9, 1e-6);
  const Bytes grad(512LL * 1024 * 1024);
  const Bytes bucket(32LL * 1024 * 1024);
  SimulationResult off = replay_dp(table, c, topo, {grad}, false, bucket);
  SimulationResult on = replay_dp(table, c, topo, {grad}, true, bucket);
  REQUIRE(off.status == RunStatus::Ok);
  REQUIRE(on.status == RunStatus::Ok);
  CHECK(off.metrics.sync.exposed_dp_sync > Time::zero());
  CHECK(on.metrics.sync.exposed_dp_sync < off.metrics.sync.exposed_dp_sync);
  CHECK(on.metrics.makespan < off.metrics.makespan);
  // The drain hides the later stages' syncs entirely: when the device that computes last (stage 0)
  // has nothing to sync (a frozen first stage), nothing is exposed; the others' syncs are not free.
  const Bytes none = Bytes::zero();
  SimulationResult hidden = replay_dp(table, c, topo, {none, grad, grad, grad}, true, bucket);
  REQUIRE(hidden.status == RunStatus::Ok);
  CHECK(hidden.metrics.sync.dp_sync > Time::zero());
  CHECK(hidden.metrics.sync.exposed_dp_sync == Time::zero());
  CHECK(hidden.metrics.makespan == hidden.metrics.sync.compute_end);
}
