// A split backward that keeps more for W than F kept for B (M_W > M_B: sequence parallelism's
// output gradients, docs/memory.md): B allocates M_W - M_B at its start, W frees M_W.
#include <doctest/doctest.h>

#include "engine_test_support.h"
#include "schedules/validator.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

constexpr std::int64_t kMB = 1000 * 1000;

StageCost split_cost(std::int64_t activation_mb, std::int64_t weight_grad_mb) {
  StageCost c = stage_cost_ms(1.0, 1.0, 0.5);
  c.activation = Bytes(activation_mb * kMB);
  c.weight_grad = Bytes(weight_grad_mb * kMB);
  return c;
}

// One device, one stage: F0 F1 B0 B1 W0 W1.
Table one_stage() {
  Table t = Table::empty(1, 1, 2, Placement::straight(1));
  t.device_ops[0] = {Op::forward(0, 0),  Op::forward(0, 1), Op::backward(0, 0),
                     Op::backward(0, 1), Op::weight(0, 0),  Op::weight(0, 1)};
  return t;
}

SimulationResult run(const Table& t, const StageCost& c, ReplayPath path) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages, c).for_table(1);
  in.path = path;
  return simulate(in);
}

}  // namespace

TEST_CASE("M_W > M_B: B allocates the difference, W frees M_W (both replay paths)") {
  const Table t = one_stage();
  REQUIRE(validate_table(t).empty());
  for (ReplayPath path : {ReplayPath::EventLoop, ReplayPath::Auto}) {
    // M_B 100, M_W 160: F F -> 200; B0 +60 -> 260 (frees nothing); B1 +60 -> 320; W0 -160; W1.
    const SimulationResult grows = run(t, split_cost(100, 160), path);
    REQUIRE(grows.status == RunStatus::Ok);
    CHECK(grows.list_scheduled == (path == ReplayPath::Auto));
    CHECK(grows.metrics.memory.peak_activation == Bytes(320 * kMB));
    // M_W <= M_B as before: F F -> 200, B0 frees 60, B1 frees 60, the peak is the two F's.
    const SimulationResult kept = run(t, split_cost(100, 40), path);
    CHECK(kept.metrics.memory.peak_activation == Bytes(200 * kMB));
  }
}

TEST_CASE("M_W > M_B: every split-backward generator replays alike in the event loop and lists") {
  const StageCost c = split_cost(100, 170);
  for (const char* name : {"zb-h1", "zb-h2", "zb-v", "1f1b"}) {
    CAPTURE(name);
    const Table t = generate(name, 4, 8, c);
    const SimulationResult loop = run(t, c, ReplayPath::EventLoop);
    const SimulationResult list = run(t, c, ReplayPath::Auto);
    REQUIRE(loop.status == RunStatus::Ok);
    CHECK(list.list_scheduled);
    CHECK(loop.metrics.memory.peak_activation_per_device ==
          list.metrics.memory.peak_activation_per_device);
    // At most p microbatches of a device are between F and W in ZB-H1 and 1F1B (device 0), each
    // holding at most max(M_B, M_W); at least the p forwards of the warm-up are resident.
    if (std::string(name) == "zb-h1" || std::string(name) == "1f1b") {
      const Bytes peak0 = loop.metrics.memory.peak_activation_per_device[0];
      CHECK(peak0 >= c.activation * 4);
      CHECK(peak0 <= c.weight_grad * 4);
    }
  }
}
