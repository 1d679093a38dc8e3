// communication.p2p_sync_gap over built-in schedules, p, m and both barriers, two iterations:
// a larger gap never shortens an iteration, every op still runs (no deadlock), a device pays at
// most one gap per op, and without a gap none is reported.
#include "sim/engine/components/host_gap/host_gap.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

Time ms(double v) { return Time::from_seconds(v * 1e-3); }

SimulationResult replay(const Table& t, int p, Time gap, std::int32_t iterations,
                        IterationBarrier barrier) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(p, stage_cost_ms(2, 3, 1)).for_table(t.chunks);
  in.network = FixedDelayNetwork{ms(0.3)};
  set_p2p(in, "blocking", gap);
  in.iterations.count = iterations;
  in.iterations.barrier = barrier;
  return simulate(in);
}

}  // namespace

TEST_CASE("host gap: never shortens an iteration, every op runs, at most one gap per op") {
  for (const std::string name : {"1f1b", "zb-h1", "zb-h2", "interleaved-1f1b", "gpipe"}) {
    for (const int p : {2, 4}) {
      for (const int m : {4, 8}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        const Table t = generate(name, p, m, stage_cost_ms(2, 3, 1));
        for (const IterationBarrier barrier : {IterationBarrier::Global, IterationBarrier::None}) {
          const SimulationResult base = replay(t, p, Time::zero(), 2, barrier);
          REQUIRE(base.status == RunStatus::Ok);
          CHECK(host_gaps(base.metrics) == nullptr);  // no gap: the behaviour is not engaged
          Time previous = base.metrics.iteration.iteration_time;
          for (const double g : {0.1, 0.5, 2.0}) {
            const SimulationResult gapped = replay(t, p, ms(g), 2, barrier);
            REQUIRE(gapped.status == RunStatus::Ok);
            CHECK(gapped.metrics.makespan >= base.metrics.makespan);
            CHECK(gapped.metrics.iteration.iteration_time >= previous);
            previous = gapped.metrics.iteration.iteration_time;
            const HostGaps* gaps = host_gaps(gapped.metrics);
            REQUIRE(gaps != nullptr);
            CHECK(*std::max_element(gaps->per_device.begin(), gaps->per_device.end()) >
                  Time::zero());
            // A device pays at most one gap per op.
            for (std::size_t d = 0; d < gapped.timings.size(); ++d)
              CHECK(gaps->per_device[d] <=
                    ms(g) * static_cast<std::int64_t>(gapped.timings[d].size()));
          }
        }
      }
    }
  }
}
