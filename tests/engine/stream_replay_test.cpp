// The streamed replay (sim/engine/stream_replay.h) reports exactly what a replay of the
// materialized table reports: every streaming generator on several shapes and parameters, uneven
// stage costs, each network without links, stragglers, both release conventions and whole
// iterations; every metric compared bit for bit (the fingerprint without per-op timings, which a
// streamed replay does not keep), and the event count.
#include "sim/engine/stream_replay.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "engine_test_support.h"
#include "result_fingerprint.h"
#include "sim/engine/end_window.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

// Stage costs that differ per stage (times, activations, static memory).
CostProfile uneven_profile(int p) {
  CostProfile profile;
  for (int s = 0; s < p; ++s) {
    StageCost c = stage_cost_ms(1.0 + 0.1 * (s % 3), 2.0 + 0.07 * s, 0.9, 2 + s % 2, 1);
    c.stage_input = Bytes(1 << 20);
    c.static_memory = Bytes((std::int64_t{1} << 28) * (1 + s % 2));
    profile.stages.push_back(c);
  }
  return profile;
}

struct Case {
  std::string name;
  int p, m;
  ParamValues params;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (auto [p, m] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {4, 8}, {8, 3}, {5, 17}})
    out.push_back({"1f1b", p, m, {}});
  auto interleaved = [&](int p, int m, int v, std::int64_t g, bool pytorch) {
    ParamValues params;
    params.set("chunks", std::int64_t{v});
    if (g > 0) params.set("microbatch_group_size", g);
    if (pytorch) params.set("grouping", std::string("pytorch"));
    out.push_back({"interleaved-1f1b", p, m, params});
  };
  interleaved(2, 4, 2, 0, false);
  interleaved(4, 8, 2, 0, false);
  interleaved(4, 12, 3, 0, false);
  interleaved(4, 14, 2, 5, false);  // a last group of 4 = p microbatches
  interleaved(4, 9, 2, 0, true);    // PyTorch grouping refuses m = 9 (not a multiple of 2 rounds)
  interleaved(4, 3, 2, 0, true);    // m < p under PyTorch grouping: g = 3
  interleaved(3, 1, 4, 0, true);
  return out;
}

GeneratorInput input_of(const Case& c) {
  GeneratorInput in;
  in.devices = c.p;
  in.microbatches = c.m;
  in.costs = uneven_profile(c.p);
  in.params = c.params;
  return in;
}

// The in-memory replay with its per-op timings dropped, as a streamed replay reports it.
std::uint64_t without_timings(SimulationResult r) {
  r.timings = OpTimings();
  return fingerprint(r);
}

}  // namespace

TEST_CASE("1f1b and interleaved-1f1b emit their orders as streams") {
  CHECK(registry().find("1f1b")->stream);
  CHECK(registry().find("interleaved-1f1b")->stream);
}

TEST_CASE("an order stream reads any stretch of a device's order as the table holds it") {
  std::mt19937 rng(7);
  for (const Case& c : cases()) {
    const Generator& g = *registry().find(c.name);
    std::unique_ptr<OrderStream> stream;
    try {
      stream = g.stream(input_of(c));
    } catch (const ScheduleConstraintError&) {
      CHECK_THROWS_AS(g.generate(input_of(c)), ScheduleConstraintError);
      continue;
    }
    const Table table = g.generate(input_of(c));
    CHECK(stream->op_count() == table.op_count());
    for (std::int32_t d = 0; d < table.devices; ++d) {
      const auto& ops = table.device_ops[static_cast<std::size_t>(d)];
      REQUIRE(stream->count(d) == ops.size());
      for (int k = 0; k < 20; ++k) {
        const std::size_t first = rng() % (ops.size() + 1), want = rng() % 7;
        std::vector<Op> got(want);
        const std::size_t n = stream->read(d, first, got);
        CHECK(n == std::min(want, ops.size() - first));
        for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == ops[first + i]);
      }
    }
  }
}

TEST_CASE("a streamed replay reports exactly the metrics of the table replayed in memory") {
  int compared = 0;
  for (const Case& c : cases()) {
    const Generator& g = *registry().find(c.name);
    std::unique_ptr<OrderStream> stream;
    try {
      stream = g.stream(input_of(c));
    } catch (const ScheduleConstraintError&) {
      continue;
    }
    const Table table = g.generate(input_of(c));
    CAPTURE(c.name);
    CAPTURE(c.p);
    CAPTURE(c.m);
    EngineInput in;
    in.table = &table;
    in.stage_costs = uneven_profile(c.p).for_table(table.chunks);
    for (ReleaseConvention release :
         {ReleaseConvention::Split, ReleaseConvention::BackwardComplete}) {
      in.release = release;
      for (const NetworkSpec& net : {NetworkSpec{NoCostNetwork{}},
                                     NetworkSpec{FixedDelayNetwork{Time::from_seconds(0.13e-3)}},
                                     NetworkSpec{FixedDelayNetwork{Time::zero()}}}) {
        in.network = net;
        for (bool straggler : {false, true}) {
          in.compute_slowdown.clear();
          if (straggler) {
            in.compute_slowdown.assign(static_cast<std::size_t>(c.p), 1.0);
            in.compute_slowdown.back() = 1.37;
          }
          for (int iterations : {1, 3}) {
            in.iterations = IterationPlan{};
            in.iterations.count = iterations;
            if (iterations > 1) {
              // Per-device boundaries (no barrier) with unequal steps: iterations are replayed.
              in.iterations.barrier = IterationBarrier::None;
              for (int d = 0; d < c.p; ++d)
                in.iterations.optimizer_step.push_back(Time::from_seconds((0.5 + 0.3 * d) * 1e-3));
            }
            const SimulationResult held = simulate(in);
            const SimulationResult streamed = simulate_streamed(in, *stream);
            REQUIRE(held.status == RunStatus::Ok);
            CHECK(streamed.status == RunStatus::Ok);
            CHECK(streamed.timings.empty());
            CHECK(without_timings(held) == fingerprint(streamed));
            CHECK(held.events == streamed.events);
            CHECK(held.metrics.iteration.iteration_time ==
                  streamed.metrics.iteration.iteration_time);
            CHECK(held.metrics.iteration.iterations == streamed.metrics.iteration.iterations);
            CHECK(held.metrics.iteration.replays == streamed.metrics.iteration.replays);
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared >= 10 * 24);  // both generators on several shapes each
}

TEST_CASE("a streamed replay refuses what it does not cover") {
  const Generator& g = *registry().find("1f1b");
  const std::unique_ptr<OrderStream> stream = g.stream(input_of({"1f1b", 4, 8, {}}));
  EngineInput in;
  in.stage_costs = uneven_profile(4).for_table(1);
  in.memory_budget.assign(4, Bytes(std::int64_t{1} << 40));
  CHECK(why_not_streamable(in).find("memory budget") != std::string::npos);
  CHECK_THROWS_AS(simulate_streamed(in, *stream), std::invalid_argument);
  in.memory_budget.clear();
  in.path = ReplayPath::EventLoop;
  CHECK_THROWS_AS(simulate_streamed(in, *stream), std::invalid_argument);
  in.path = ReplayPath::Auto;
  CHECK(why_not_streamable(in).empty());

  // A stream that breaks the premise (a W op) is a logic error, not a wrong result.
  class WithWeight final : public OrderStream {
   public:
    WithWeight() : OrderStream(Table::empty(1, 1, 1, Placement::straight(1))) {}
    std::uint64_t count(std::int32_t) const override { return 3; }
    std::size_t read(std::int32_t, std::uint64_t first, std::span<Op> out) const override {
      const Op ops[] = {Op::forward(0, 0), Op::backward(0, 0), Op::weight(0, 0)};
      std::size_t n = 0;
      for (std::uint64_t i = first; i < 3 && n < out.size(); ++i) out[n++] = ops[i];
      return n;
    }
  };
  in.stage_costs = uneven_profile(1).for_table(1);
  CHECK_THROWS_AS(simulate_streamed(in, WithWeight()), std::logic_error);
}

TEST_CASE("an end window holds only the microbatches still needed") {
  EndWindow w;
  // A producer running 5 microbatches ahead of the consumer of each entry: the ring stays at its
  // first size however many microbatches pass.
  for (std::int64_t j = 0; j < 100000; ++j) {
    w.put(j, 10 * j, 1);
    if (j >= 5) {
      CHECK(w.end(j - 5) == 10 * (j - 5));
      w.consumed(j - 5);
    }
    if (j % 1000 == 0) CHECK(w.end(j + 1) == EndWindow::kPending);
  }
  CHECK(w.capacity() == 16);
  // Two consumers: the entry stays until both ran; a producer far ahead grows the ring.
  EndWindow two;
  two.put(0, 1, 2);
  two.consumed(0);
  CHECK(two.end(0) == 1);
  two.put(40, 2, 1);
  CHECK(two.capacity() == 64);
  CHECK(two.end(40) == 2);
  CHECK(two.end(39) == EndWindow::kPending);
}
