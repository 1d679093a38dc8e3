// The expert all-to-all as flows of the replay (sim/engine/expert_exchange.h, docs/moe.md): on an
// otherwise idle network every op lasts what the stage costs say (simulate_all_to_all's time,
// and for fused F&B ops overlap_a2a's formula); sharing links with pipeline transfers slows both.
#include "sim/engine/expert_exchange.h"

#include <doctest/doctest.h>

#include <memory>

#include "engine_test_support.h"
#include "sim/engine/collectives.h"
#include "topologies/topology_builders.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

// 2 GPUs per node, every device's EP group 4 GPUs on 2 nodes (device d: nodes 2d and 2d + 1).
struct Cluster {
  Topology topology;
  std::vector<std::vector<VertexId>> groups;
  std::vector<VertexId> devices;
};

Cluster cluster(std::int32_t devices) {
  ClusterParams p;
  p.nodes = 2 * devices;
  p.node.gpus = 2;
  p.node.gpus_per_pcie_switch = 1;
  p.node.nvlink = {Bandwidth::bytes_per_second(100e9), Time::from_ps(1'000'000)};
  p.nic = {Bandwidth::bytes_per_second(10e9), Time::from_ps(2'000'000)};
  Cluster c{build_cluster(p), {}, {}};
  auto gpu = [&](std::int32_t node, std::int32_t g) {
    return *c.topology.find("n" + std::to_string(node) + ".gpu" + std::to_string(g));
  };
  for (std::int32_t d = 0; d < devices; ++d) {
    c.groups.push_back({gpu(2 * d, 0), gpu(2 * d, 1), gpu(2 * d + 1, 0), gpu(2 * d + 1, 1)});
    c.devices.push_back(c.groups.back().front());
  }
  return c;
}

constexpr double kBytes = 40e6;     // one all-to-all: what each GPU dispatches
constexpr double kFactor = 0.5;     // on flows between nodes (moe.max_nodes)
constexpr std::int32_t kSteps = 4;  // all-to-alls in one F and in one B (2 MoE layers)

// A stage of 10 ms F, 20 ms B, 0 W (the full backward), its all-to-all exposed in F and B.
StageCost moe_stage(const Cluster& c, double sm_share, Bytes p2p) {
  const Time one = simulate_all_to_all(c.topology, c.groups[0], kBytes, kFactor);
  StageCost s = stage_cost_ms(10, 20, 0);
  s.moe.a2a_forward = s.moe.a2a_forward_exposed = one * kSteps;
  s.moe.a2a_backward = s.moe.a2a_backward_exposed = one * kSteps;
  s.forward = s.forward + s.moe.a2a_forward;
  s.backward_input = s.backward_input + s.moe.a2a_backward;
  s.moe.a2a_sm.share = sm_share;
  s.moe.a2a_bytes = Bytes(static_cast<std::int64_t>(kBytes));
  s.moe.a2a_count_forward = s.moe.a2a_count_backward = kSteps;
  s.p2p = p2p;
  return s;
}

std::shared_ptr<A2aPlan> plan_of(const Cluster& c, const Table& t) {
  auto plan = std::make_shared<A2aPlan>();
  plan->groups = c.groups;
  plan->cross_node_factor.assign(c.groups.size(), kFactor);
  plan->stages.assign(static_cast<std::size_t>(t.stages), A2aPlan::Stage{kBytes, kSteps, kSteps});
  return plan;
}

SimulationResult run(const Cluster& c, const Table& t, const StageCost& s, bool flows) {
  EngineInput in;
  in.table = &t;
  in.stage_costs.assign(static_cast<std::size_t>(t.stages), s);
  in.network = TopologyNetwork{&c.topology, c.devices, flows ? plan_of(c, t) : nullptr};
  in.path = ReplayPath::EventLoop;
  return simulate(in);
}

// Every op ends within `slack` of the other replay's (rounding of the rates, a picosecond per
// flow completion).
void check_same_timings(const SimulationResult& a, const SimulationResult& b, Time slack) {
  REQUIRE(a.status == RunStatus::Ok);
  REQUIRE(b.status == RunStatus::Ok);
  for (std::size_t d = 0; d < a.timings.size(); ++d) {
    for (std::size_t i = 0; i < a.timings[d].size(); ++i) {
      const Time x = a.timings[d][i].end, y = b.timings[d][i].end;
      CHECK((x > y ? x - y : y - x) <= slack);
    }
  }
}

}  // namespace

TEST_CASE("expert all-to-all as flows: on an idle network the ops last what the costs say") {
  const Cluster c = cluster(2);
  const StageCost s = moe_stage(c, 0, Bytes::zero());  // no pipeline transfer to contend with
  const Table t = generate("1f1b", 2, 4, s);
  const SimulationResult idle = run(c, t, s, false), shared = run(c, t, s, true);
  check_same_timings(idle, shared, Time::from_ps(64));
  // The replay's all-to-all time is the costs': every F and B of the device, all exposed.
  REQUIRE(shared.metrics.a2a.total_per_device.size() == 2);
  const Time expected = (s.moe.a2a_forward + s.moe.a2a_backward) * 4;
  for (std::size_t d = 0; d < 2; ++d) {
    const Time total = shared.metrics.a2a.total_per_device[d];
    CHECK((total > expected ? total - expected : expected - total) <= Time::from_ps(64));
    CHECK(shared.metrics.a2a.exposed_per_device[d] == total);
  }
  CHECK(idle.metrics.a2a.total_per_device.empty());  // folded into the ops: from the costs
}

TEST_CASE("expert all-to-all as flows: fused F&B ops keep overlap_a2a's formula when idle") {
  const Cluster c = cluster(4);
  for (double share : {0.0, 0.15}) {
    CAPTURE(share);
    const StageCost s = moe_stage(c, share, Bytes::zero());
    const Table t = generate("dualpipe", 4, 8, s);
    std::int32_t fused = 0;
    for (const auto& ops : t.device_ops)
      for (const Op& op : ops) fused += op.kind == OpKind::ForwardBackward ? 1 : 0;
    REQUIRE(fused > 0);
    const SimulationResult idle = run(c, t, s, false), shared = run(c, t, s, true);
    check_same_timings(idle, shared, Time::from_ps(256));
    if (share > 0) {
      Time slowed;
      for (Time x : shared.metrics.a2a.slowdown_per_device) slowed += x;
      CHECK(slowed > Time::zero());  // the fused ops' compute lost time to the SMs
    }
  }
}

TEST_CASE("expert all-to-all as flows: pipeline transfers share the NIC with it") {
  const Cluster c = cluster(2);
  // 20 MB activations cross nodes between the two devices, over the NICs the all-to-all uses.
  const StageCost s = moe_stage(c, 0, Bytes(20'000'000));
  const Table t = generate("1f1b", 2, 8, s);
  const SimulationResult idle = run(c, t, s, false), shared = run(c, t, s, true);
  REQUIRE(shared.status == RunStatus::Ok);
  CHECK(shared.metrics.makespan > idle.metrics.makespan);
  Time total, costs = (s.moe.a2a_forward + s.moe.a2a_backward) * 8;
  for (Time x : shared.metrics.a2a.total_per_device) total = std::max(total, x);
  CHECK(total > costs);  // some all-to-all met a transfer
  // Deterministic: the same replay twice gives the same timings.
  check_same_timings(shared, run(c, t, s, true), Time::zero());
}

TEST_CASE("expert all-to-all as flows: observers get each op's all-to-all with its links") {
  struct Collect final : EngineObserver {
    std::vector<CollectiveEvent> events;
    void on_collective(const CollectiveEvent& e) override {
      if (e.name.starts_with("expert all-to-all")) events.push_back(e);
    }
  };
  const Cluster c = cluster(2);
  const StageCost s = moe_stage(c, 0, Bytes::zero());
  const Table t = generate("1f1b", 2, 2, s);
  EngineInput in;
  in.table = &t;
  in.stage_costs.assign(static_cast<std::size_t>(t.stages), s);
  in.network = TopologyNetwork{&c.topology, c.devices, plan_of(c, t)};
  Collect collect;
  Engine engine(in);
  engine.add_observer(&collect);
  const SimulationResult r = engine.run();
  REQUIRE(r.status == RunStatus::Ok);
  // One slice per F and B, from the end of the op's compute to the op's end.
  REQUIRE(collect.events.size() == 8);
  for (const CollectiveEvent& e : collect.events) {
    CAPTURE(e.name);
    CHECK(e.name.find("(exposed)") != std::string::npos);
    CHECK(!e.links.empty());
    CHECK(e.link_start.size() == e.links.size());
    CHECK(e.bytes > Bytes::zero());
    const Time length = e.end - e.start;
    CHECK((length > s.moe.a2a_forward ? length - s.moe.a2a_forward : s.moe.a2a_forward - length) <=
          Time::from_ps(16));
    bool ends_an_op = false;
    for (const OpTiming& o : r.timings[static_cast<std::size_t>(e.device)])
      ends_an_op = ends_an_op || o.end == e.end;
    CHECK(ends_an_op);
  }
}
