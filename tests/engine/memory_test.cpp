// Memory hierarchy: offload / reload over PCIe, recomputation, budgets (docs/memory.md).
#include <doctest/doctest.h>

#include "engine_test_support.h"
#include "schedules/passes/memory_passes.h"
#include "schedules/validator.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

constexpr std::int64_t kMB = 1000 * 1000;

StageCost memory_cost(double f, double b, std::int64_t activation, std::int64_t input = 0) {
  StageCost c = stage_cost_ms(f, b, 0);
  c.activation = Bytes(activation);
  c.stage_input = Bytes(input);
  c.recompute = c.forward;
  return c;
}

EngineInput input_for(const Table& t, const StageCost& c) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages, c).for_table(1);
  return in;
}

TableTimings timings_of(const SimulationResult& r) {
  TableTimings out(r.timings.size());
  for (std::size_t d = 0; d < r.timings.size(); ++d) {
    for (const OpTiming& t : r.timings[d]) out[d].push_back(OpWindow{t.start, t.end});
  }
  return out;
}

// 1F1B with full offload over a private link of `bandwidth` per GPU.
struct OffloadRun {
  SimulationResult base, offloaded;
  PassDecision decision;
};
OffloadRun run_offload(int p, int m, const StageCost& c, Bandwidth bandwidth, MemoryPolicy policy) {
  Table t = generate("1f1b", p, m, c);
  EngineInput in = input_for(t, c);
  in.offload_bandwidth = bandwidth;
  OffloadRun out;
  out.base = simulate(in);
  OffloadSettings s;
  s.policy = policy;
  s.d2h.assign(static_cast<std::size_t>(p), bandwidth);
  s.h2d = s.d2h;
  PassResult pass = apply_offload_pass(t, in.stage_costs, timings_of(simulate(input_for(t, c))), s);
  REQUIRE(validate_table(pass.table).empty());
  EngineInput off = input_for(pass.table, c);
  off.offload_bandwidth = bandwidth;
  out.offloaded = simulate(off);
  out.decision = pass.decision;
  return out;
}

}  // namespace

TEST_CASE("full offload with k < 1 keeps the makespan and halves device 0's peak activation") {
  // T_F + T_B = 3ms; 100MB at 400GB/s is 0.25ms each way: k = 0.25 / 3 < 1.
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  OffloadRun r = run_offload(8, 16, c, Bandwidth::bytes_per_second(400e9), MemoryPolicy::Full);
  REQUIRE(r.offloaded.status == RunStatus::Ok);
  CHECK(r.decision.count_per_device[0] > 0);
  CHECK(r.offloaded.metrics.offload.offloaded_bytes > Bytes::zero());
  const double base = r.base.metrics.makespan.seconds();
  CHECK(r.offloaded.metrics.makespan.seconds() <= base * 1.01);
  CHECK(r.offloaded.metrics.memory.peak_activation_per_device[0].count() * 2 <=
        r.base.metrics.memory.peak_activation_per_device[0].count());
  CHECK(r.offloaded.metrics.offload.d2h_busy_per_device[0] > Time::zero());
  CHECK(r.offloaded.metrics.offload.h2d_busy_per_device[0] ==
        r.offloaded.metrics.offload.d2h_busy_per_device[0]);
}

TEST_CASE("full offload with k > 1 grows the makespan and reports exposed offload") {
  // 100MB at 20GB/s is 5ms each way against 3ms of compute: k = 5/3.
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  OffloadRun r = run_offload(8, 16, c, Bandwidth::bytes_per_second(20e9), MemoryPolicy::Full);
  REQUIRE(r.offloaded.status == RunStatus::Ok);
  CHECK(r.decision.count_per_device[0] > 0);
  CHECK(r.offloaded.metrics.makespan > r.base.metrics.makespan);
  CHECK(r.offloaded.metrics.offload.exposed_offload > Time::zero());
  CHECK(r.base.metrics.offload.exposed_offload == Time::zero());
}

TEST_CASE("selective offload takes the longest-lived half of each device's activations") {
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  OffloadRun full = run_offload(4, 8, c, Bandwidth::bytes_per_second(400e9), MemoryPolicy::Full);
  OffloadRun half =
      run_offload(4, 8, c, Bandwidth::bytes_per_second(400e9), MemoryPolicy::Selective);
  for (std::size_t d = 0; d < 4; ++d) {
    CHECK(half.decision.count_per_device[d] == (full.decision.count_per_device[d] + 1) / 2);
  }
  CHECK(half.offloaded.metrics.offload.offloaded_bytes <
        full.offloaded.metrics.offload.offloaded_bytes);
  CHECK(half.offloaded.metrics.memory.peak_activation_per_device[0] >=
        full.offloaded.metrics.memory.peak_activation_per_device[0]);
  CHECK(half.offloaded.metrics.memory.peak_activation_per_device[0] <=
        full.base.metrics.memory.peak_activation_per_device[0]);
}

TEST_CASE("the reload starts `prefetch` compute ops before its backward") {
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  Table t = generate("1f1b", 4, 8, c);
  EngineInput in = input_for(t, c);
  OffloadSettings s;
  s.policy = MemoryPolicy::Full;
  s.prefetch = 2;
  s.d2h.assign(4, Bandwidth::bytes_per_second(400e9));
  s.h2d = s.d2h;
  PassResult pass = apply_offload_pass(t, in.stage_costs, timings_of(simulate(in)), s);
  for (const auto& ops : pass.table.device_ops) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::Reload) continue;
      // Count compute ops between the reload and its backward: the trigger plus prefetch - 1.
      int between = 0;
      std::size_t k = i + 1;
      for (; k < ops.size() && !(ops[k].kind == OpKind::Backward && ops[k].stage == ops[i].stage &&
                                 ops[k].microbatch == ops[i].microbatch);
           ++k) {
        if (stream_of(ops[k].kind) == Stream::Compute) ++between;
      }
      REQUIRE(k < ops.size());
      CHECK(between == 1);  // prefetch 2: one compute op after the trigger, then the B
    }
  }
  CHECK_THROWS_AS(apply_offload_pass(t, in.stage_costs, timings_of(simulate(in)),
                                     OffloadSettings{MemoryPolicy::Full, 0, {}, {}, s.d2h, s.h2d}),
                  std::invalid_argument);
}

TEST_CASE("full recomputation: peak activation falls to the stored inputs, busy grows by m T_F") {
  const int p = 4, m = 8;
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB, 10 * kMB);
  Table t = generate("1f1b", p, m, c);
  EngineInput in = input_for(t, c);
  SimulationResult base = simulate(in);
  RecomputeSettings whole;  // one R op per (stage, microbatch)
  whole.policy = MemoryPolicy::Full;
  whole.granularity = RecomputeGranularity::Stage;
  PassResult full = apply_recompute_pass(t, in.stage_costs, whole);
  REQUIRE(validate_table(full.table).empty());
  SimulationResult rf = simulate(input_for(full.table, c));
  RecomputeSettings sel = whole;
  sel.fraction = 0.5;  // the first half
  PassResult half = apply_recompute_pass(t, in.stage_costs, sel);
  SimulationResult rs = simulate(input_for(half.table, c));
  REQUIRE(rf.status == RunStatus::Ok);
  REQUIRE(rs.status == RunStatus::Ok);
  CHECK(half.decision.stages == std::vector<std::int32_t>{0, 1});
  for (int d = 0; d < p; ++d) {
    const auto i = static_cast<std::size_t>(d);
    // One recomputed forward per microbatch.
    CHECK(rf.metrics.busy_per_device[i] - base.metrics.busy_per_device[i] == c.forward * m);
    CHECK(rs.metrics.busy_per_device[i] - base.metrics.busy_per_device[i] ==
          (d < 2 ? c.forward * m : Time::zero()));
    // 1F1B device d stores p - d activations; recomputing, only their inputs plus the one
    // activation being rebuilt.
    CHECK(base.metrics.memory.peak_activation_per_device[i] == c.activation * (p - d));
    CHECK(rf.metrics.memory.peak_activation_per_device[i] ==
          c.stage_input * (p - d) + c.activation);
    CHECK(full.decision.count_per_device[i] == m);
  }
  CHECK(rf.metrics.recompute_time == c.forward * (p * m));
  CHECK(rs.metrics.recompute_time == c.forward * (2 * m));
  // Selective sits between full and none on both.
  Time busy_base, busy_full, busy_sel;
  for (int d = 0; d < p; ++d) {
    busy_base += base.metrics.busy_per_device[static_cast<std::size_t>(d)];
    busy_full += rf.metrics.busy_per_device[static_cast<std::size_t>(d)];
    busy_sel += rs.metrics.busy_per_device[static_cast<std::size_t>(d)];
  }
  CHECK(busy_base < busy_sel);
  CHECK(busy_sel < busy_full);
  CHECK(rf.metrics.memory.peak_activation < rs.metrics.memory.peak_activation);
  CHECK(rs.metrics.memory.peak_activation < base.metrics.memory.peak_activation);
}

TEST_CASE("a budget below the need is out_of_memory with device, time and bytes") {
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  c.static_memory = Bytes(1000 * kMB);
  Table t = generate("1f1b", 4, 8, c);
  EngineInput in = input_for(t, c);
  in.memory_budget.assign(4, Bytes(1250 * kMB));  // device 0 needs 1000 + 4 x 100
  SimulationResult r = simulate(in);
  REQUIRE(r.status == RunStatus::OutOfMemory);
  REQUIRE(r.out_of_memory.size() == 2);  // devices 0 (1400MB) and 1 (1300MB)
  CHECK(r.out_of_memory[0].device == 0);
  CHECK(r.out_of_memory[0].host.empty());
  CHECK(r.out_of_memory[0].over == Bytes(50 * kMB));
  CHECK(r.out_of_memory[0].time == c.forward * 2);  // the third forward's allocation
  CHECK(r.out_of_memory[0].op == "F0.2");
  CHECK(r.failure.find("device 0") != std::string::npos);
}

TEST_CASE("host capacity: offloaded bytes above it are out_of_memory naming the host") {
  StageCost c = memory_cost(1.0, 2.0, 100 * kMB);
  Table t = generate("1f1b", 4, 8, c);
  EngineInput in = input_for(t, c);
  OffloadSettings s;
  s.policy = MemoryPolicy::Full;
  s.d2h.assign(4, Bandwidth::bytes_per_second(400e9));
  s.h2d = s.d2h;
  PassResult pass = apply_offload_pass(t, in.stage_costs, timings_of(simulate(in)), s);
  EngineInput off = input_for(pass.table, c);
  off.offload_bandwidth = s.d2h[0];
  off.host_capacity = Bytes(150 * kMB);
  SimulationResult r = simulate(off);
  REQUIRE(r.status == RunStatus::OutOfMemory);
  CHECK(r.out_of_memory[0].host == "host");
  CHECK(r.failure.find("host memory on 'host'") != std::string::npos);
  off.host_capacity = Bytes(100000 * kMB);
  CHECK(simulate(off).status == RunStatus::Ok);
}

TEST_CASE("two GPUs offloading at once through one PCIe switch each get half its uplink") {
  // gpu0, gpu1 -- 32GB/s -- switch -- 16GB/s -- host. F takes no time, so both offloads of
  // 1GB start at t = 0 and share the 16GB/s uplink: 125ms instead of 62.5ms alone.
  Topology topo;
  VertexId g0 = topo.add_vertex("gpu0", VertexKind::Gpu);
  VertexId g1 = topo.add_vertex("gpu1", VertexKind::Gpu);
  VertexId sw = topo.add_vertex("pcie0", VertexKind::PcieSwitch);
  VertexId host = topo.add_vertex("host0", VertexKind::Host);
  topo.add_link(g0, sw, Bandwidth::bytes_per_second(32e9), Time::zero());
  topo.add_link(g1, sw, Bandwidth::bytes_per_second(32e9), Time::zero());
  topo.add_link(sw, host, Bandwidth::bytes_per_second(16e9), Time::zero());
  StageCost c = memory_cost(0.0, 1.0, 1000 * kMB);
  auto make = [](bool second_offloads) {
    Table t;
    t.devices = 2;
    t.stages = 2;
    t.microbatches = 1;
    t.placement = Placement::straight(2);
    t.device_ops = {{Op::forward(0, 0), Op{OpKind::Offload, 0, 0}, Op{OpKind::Reload, 0, 0},
                     Op::backward(0, 0)},
                    {Op::forward(1, 0), Op::backward(1, 0)}};
    if (second_offloads) {
      t.device_ops[1] = {Op::forward(1, 0), Op{OpKind::Offload, 1, 0}, Op{OpKind::Reload, 1, 0},
                         Op::backward(1, 0)};
    }
    return t;
  };
  for (bool both : {true, false}) {
    Table t = make(both);
    REQUIRE(validate_table(t).empty());
    EngineInput in = input_for(t, c);
    in.network = TopologyNetwork{&topo, {g0, g1}};
    SimulationResult r = simulate(in);
    REQUIRE(r.status == RunStatus::Ok);
    const Time expected = Time::from_seconds(both ? 0.125 : 0.0625);
    CHECK(r.timings[0][1].start == Time::zero());
    CHECK(std::abs((r.timings[0][1].end - expected).seconds()) < 1e-9);
    if (both) CHECK(std::abs((r.timings[1][1].end - expected).seconds()) < 1e-9);
    CHECK(r.metrics.offload.offloaded_bytes == Bytes(both ? 2000 * kMB : 1000 * kMB));
  }
}
