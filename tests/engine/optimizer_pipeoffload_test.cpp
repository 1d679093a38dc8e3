// `optimized` with offload against PipeOffload's own interleaved schedule with offload (issue 19,
// docs/optimizer.md "PipeOffload"): at the peer's peak activation memory and its k, the engine's
// replay of our plan is at or below the peer's stage span.
//
// The peer's number is written here, not computed (the tests do not need the peer's code). It
// came from
//   git -C MIRROR archive 39f2c186 megatron/core/pipeline_parallel/zerobubble/scheduler |
//     tar -x -C /tmp/pipeoffload
//   python3 tests/bench/peers/pipeoffload_interleaved.py /tmp/pipeoffload
// row "8,16,2,3,1,1,0.5,8,269,8,8,128": p = 8, m = 16, per chunk T_F 2, T_B 3, T_W 1, delay 1,
// k = 0.5, interleave group 8 (group_interleaved_1f1b with cpu_offload, two chunks per device,
// the first offloaded): span 269 units, peak 8 chunk activations under its own count and ours.
#include <doctest/doctest.h>

#include "engine_test_support.h"
#include "optimizer_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

TEST_CASE(
    "optimized with offload and V placement: at or below PipeOffload's interleaved "
    "schedule at its peak (p = 8, m = 16, k = 0.5)") {
  constexpr double kPeerSpanMs = 269;  // the peer's stage span, 1 unit = 1 ms
  const int p = 8, m = 16;
  // A device's two chunks: T_F 4, T_B 6, T_W 2 ms; M_B = 2 chunk activations. The peer frees a
  // chunk's activation at its W (F +1, W -1), so M_W = M_B.
  const StageCost c = stage_cost_ms(4, 6, 2, 2, 2);
  const Time comm = Time::from_seconds(1e-3);
  const double units = 4.0;  // the peer's peak: 8 chunk activations = 4 M_B
  // k = 0.5: one M_B copied in 0.5 (T_F + T_B + T_W) = 6 ms each way (a chunk in 3 ms, as the
  // peer's copy of one chunk takes 0.5 of that chunk's F + B + W).
  const Bandwidth link = Bandwidth::bytes_per_second(c.activation.as_double() / 6e-3);
  GeneratorInput in = input(p, m, c, comm, units, "heuristic");
  in.params.set("placement", std::string("v"));
  in.params.set("offload", true);
  in.offload_d2h.assign(static_cast<std::size_t>(p), link);
  in.offload_h2d = in.offload_d2h;
  const Table t = registry().find("optimized")->generate(in);
  REQUIRE(t.chunks == 2);
  EngineInput e;
  e.table = &t;
  e.stage_costs = CostProfile::uniform(p, c).for_table(2);
  e.network = FixedDelayNetwork{comm};
  e.memory_budget.assign(static_cast<std::size_t>(p),
                         Bytes(static_cast<std::int64_t>(units * c.activation.as_double())));
  e.offload_bandwidth = link;
  const SimulationResult r = simulate(e);
  REQUIRE(r.status == RunStatus::Ok);  // never over the peer's peak on any device
  CHECK(r.metrics.stage_span_max.seconds() * 1e3 <= kPeerSpanMs);
  std::int64_t offloads = 0;
  for (const auto& ops : t.device_ops)
    for (const Op& op : ops) offloads += op.kind == OpKind::Offload ? 1 : 0;
  CHECK(offloads > 0);  // without offload this limit costs far more (V at 0.5x: 376 units)
}
