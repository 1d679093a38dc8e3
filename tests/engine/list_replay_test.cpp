// The list-scheduling replay (sim/engine/list_replay.h) gives exactly the event loop's result:
// every registered generator on several shapes, over each network model, replayed both ways and
// compared op by op and metric by metric (and the event count where the networks have no links).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "engine_test_support.h"
#include "result_fingerprint.h"
#include "schedules/passes/memory_passes.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

StageCost uneven_cost() {
  StageCost c = stage_cost_ms(1.3, 2.1, 0.7, 3, 1);
  c.p2p = Bytes(5 << 20);
  c.stage_input = Bytes(1 << 20);
  c.static_memory = Bytes(std::int64_t{1} << 30);
  return c;
}

// GPUs in a line, each neighbour pair joined by one link per direction: every pair of adjacent
// devices owns its two links, so straight and looped placements cannot contend when transfers
// are shorter than the ops that send them.
struct Line {
  Topology topology;
  std::vector<VertexId> gpus;
};
Line line(int p, double gbps) {
  Line l;
  for (int d = 0; d < p; ++d)
    l.gpus.push_back(l.topology.add_vertex(fmt::format("gpu{}", d), VertexKind::Gpu));
  for (int d = 0; d + 1 < p; ++d) {
    const auto a = l.gpus[static_cast<std::size_t>(d)], b = l.gpus[static_cast<std::size_t>(d + 1)];
    l.topology.add_link(a, b, Bandwidth::bytes_per_second(gbps * 1e9), Time::from_seconds(2e-6));
    l.topology.add_link(b, a, Bandwidth::bytes_per_second(gbps * 1e9), Time::from_seconds(2e-6));
  }
  return l;
}

// GPUs on one switch, one link each way between a GPU and the switch: a GPU's activations and
// gradients leave over the same uplink (two device pairs share it), so freedom from contention
// is not proven up front; the engine checks each list replay's transfers and falls back to the
// event loop when two of them met on a link.
Line star(int p, double gbps) {
  Line l;
  const VertexId sw = l.topology.add_vertex("switch", VertexKind::Switch);
  for (int d = 0; d < p; ++d) {
    const VertexId g = l.topology.add_vertex(fmt::format("gpu{}", d), VertexKind::Gpu);
    l.gpus.push_back(g);
    l.topology.add_link(g, sw, Bandwidth::bytes_per_second(gbps * 1e9), Time::from_seconds(1e-6));
    l.topology.add_link(sw, g, Bandwidth::bytes_per_second(gbps * 1e9), Time::from_seconds(1e-6));
  }
  return l;
}

struct Shape {
  int p, m, v;
};

std::optional<Table> generate_shape(const Generator& g, const Shape& s, const StageCost& c) {
  GeneratorInput in = generator_input(s.p, s.m, c);
  bool has_v = false;
  for (const ParamSpec& spec : g.info.params) {
    if (spec.name == "chunks" || spec.name == "v") {
      in.params.set(spec.name, std::int64_t{s.v});
      has_v = true;
    }
  }
  if (!has_v && s.v != 1) return std::nullopt;
  if (g.info.name == "optimized") {
    in.params.set("method", std::string("heuristic"));
    in.params.set("budget_evals", std::int64_t{50});
  }
  try {
    return g.generate(in);
  } catch (const ScheduleConstraintError&) {
    return std::nullopt;
  }
}

// Replays `in` both ways; returns whether the automatic choice was list scheduling.
bool check_both_ways(EngineInput in, bool compare_events) {
  in.path = ReplayPath::EventLoop;
  const SimulationResult loop = simulate(in);
  in.path = ReplayPath::Auto;
  const SimulationResult list = simulate(in);
  CHECK_FALSE(loop.list_scheduled);
  REQUIRE(loop.timings.size() == list.timings.size());
  for (std::size_t d = 0; d < loop.timings.size(); ++d) {
    REQUIRE(loop.timings[d].size() == list.timings[d].size());
    for (std::size_t i = 0; i < loop.timings[d].size(); ++i) {
      INFO("device " << d << " op " << i);
      REQUIRE(loop.timings[d][i].start == list.timings[d][i].start);
      REQUIRE(loop.timings[d][i].end == list.timings[d][i].end);
    }
  }
  CHECK(fingerprint(loop) == fingerprint(list));
  if (compare_events) CHECK(loop.events == list.events);
  return list.list_scheduled;
}

}  // namespace

TEST_CASE("list scheduling replays every generator exactly like the event loop") {
  const StageCost c = uneven_cost();
  const std::vector<Shape> shapes{{2, 3, 1}, {4, 8, 1},  {4, 8, 2},
                                  {3, 9, 2}, {8, 24, 1}, {8, 16, 2}};
  int replays = 0, listed = 0, star_fast = 0, star_listed = 0;
  for (const std::string& name : registry().names()) {
    if (name == "from-file") continue;
    const Generator& g = *registry().find(name);
    for (const Shape& s : shapes) {
      std::optional<Table> t = generate_shape(g, s, c);
      if (!t) continue;
      CAPTURE(name);
      CAPTURE(s.p);
      CAPTURE(s.m);
      CAPTURE(s.v);
      EngineInput in;
      in.table = &*t;
      in.stage_costs = CostProfile::uniform(s.p, c).for_table(t->chunks);
      for (ReleaseConvention release :
           {ReleaseConvention::Split, ReleaseConvention::BackwardComplete}) {
        in.release = release;
        in.network = NoCostNetwork{};
        listed += check_both_ways(in, true) ? 1 : 0;
        in.network = FixedDelayNetwork{Time::from_seconds(0.13e-3)};
        listed += check_both_ways(in, true) ? 1 : 0;
        in.network = FixedDelayNetwork{Time::zero()};
        listed += check_both_ways(in, true) ? 1 : 0;
        replays += 3;
      }
      // A fast line (no contention) and a slow one (transfers longer than ops: the event loop).
      for (double gbps : {100.0, 0.5}) {
        Line l = line(s.p, gbps);
        in.network = TopologyNetwork{&l.topology, l.gpus};
        const bool used = check_both_ways(in, false);
        if (gbps < 1.0) CHECK_FALSE(used);
        listed += used ? 1 : 0;
        ++replays;
      }
      // Shared uplinks: list-scheduled when no two transfers met, else the event loop.
      for (double gbps : {100.0, 0.5}) {
        Line l = star(s.p, gbps);
        in.network = TopologyNetwork{&l.topology, l.gpus};
        const bool used = check_both_ways(in, false);
        if (gbps < 1.0) CHECK_FALSE(used);
        if (gbps > 1.0) {
          star_listed += used ? 1 : 0;
          ++star_fast;
        }
        listed += used ? 1 : 0;
        ++replays;
      }
    }
  }
  MESSAGE(
      fmt::format("{} replays compared, {} of them list-scheduled; shared uplinks, fast: "
                  "{} of {}",
                  replays, listed, star_listed, star_fast));
  CHECK(listed > replays / 2);
  CHECK(star_listed > star_fast / 2);
}

TEST_CASE("list scheduling: stragglers, recompute, budgets and deadlocks") {
  StageCost c = uneven_cost();
  Table t = generate("1f1b", 4, 8, c);
  std::vector<StageCost> costs = CostProfile::uniform(4, c).for_table(1);
  EngineInput in;
  in.table = &t;
  in.stage_costs = costs;
  in.network = FixedDelayNetwork{Time::from_seconds(0.2e-3)};
  SUBCASE("a straggler") {
    in.compute_slowdown = {1.0, 1.7, 1.0, 1.0};
    CHECK(check_both_ways(in, true));
  }
  SUBCASE("full recompute (R ops)") {
    RecomputeSettings settings;
    settings.policy = MemoryPolicy::Full;
    settings.granularity = RecomputeGranularity::Stage;
    Table r = apply_recompute_pass(t, costs, settings).table;
    in.table = &r;
    CHECK(check_both_ways(in, true));
  }
  SUBCASE("recompute per unit inside B: one unit held while each backward runs") {
    std::vector<StageCost> per_unit = costs;
    for (StageCost& k : per_unit) k.backward_recompute.unit = Bytes(64 << 20);
    in.stage_costs = per_unit;
    CHECK(check_both_ways(in, true));
    // 1F1B device 0 holds 4 forwards' activations when its first B starts, and that B's unit.
    CHECK(simulate(in).metrics.memory.peak_activation_per_device[0] ==
          c.activation * 4 + Bytes(64 << 20));
  }
  SUBCASE("a budget that overflows: the event loop reports it") {
    in.memory_budget.assign(4, Bytes(std::int64_t{1} << 30) + Bytes(5 << 20));
    CHECK_FALSE(check_both_ways(in, true));
    CHECK(simulate(in).status == RunStatus::OutOfMemory);
  }
  SUBCASE("a table that cannot finish: the event loop names the blocked ops") {
    auto& ops = t.device_ops[1];
    std::rotate(ops.rbegin(), ops.rbegin() + 1, ops.rend());  // a B first: its F comes later
    CHECK_FALSE(check_both_ways(in, true));
    CHECK(simulate(in).status == RunStatus::Deadlock);
  }
}
