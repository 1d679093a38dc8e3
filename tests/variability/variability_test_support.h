#pragma once
// Helpers of the variability tests: specs, engine inputs and exact comparisons of replays.

#include <doctest/doctest.h>

#include <memory>

#include "engine_test_support.h"
#include "sim/variability/monte_carlo.h"

namespace bubblesim::testing {

inline std::shared_ptr<const VariabilitySpec> spec_with(double cv, std::int64_t samples,
                                                        JitterDistribution d,
                                                        JitterUnit per = JitterUnit::Op) {
  auto s = std::make_shared<VariabilitySpec>();
  s->cv.fill(cv);
  s->samples = samples;
  s->distribution = d;
  s->per = per;
  return s;
}

/// Engine input for table `t` with uniform cost `c` per table stage.
inline EngineInput input_for(const Table& t, const StageCost& c,
                             NetworkSpec network = NoCostNetwork{}) {
  EngineInput in;
  in.table = &t;
  in.stage_costs = CostProfile::uniform(t.stages / t.chunks, c).for_table(t.chunks);
  in.network = std::move(network);
  return in;
}

/// Every timing and scalar metric of two replays are equal (to the picosecond and the bit).
inline void check_identical(const SimulationResult& a, const SimulationResult& b) {
  REQUIRE(a.status == b.status);
  REQUIRE(a.timings.size() == b.timings.size());
  for (std::size_t d = 0; d < a.timings.size(); ++d) {
    REQUIRE(a.timings[d].size() == b.timings[d].size());
    for (std::size_t i = 0; i < a.timings[d].size(); ++i) {
      REQUIRE(a.timings[d][i].start == b.timings[d][i].start);
      REQUIRE(a.timings[d][i].end == b.timings[d][i].end);
    }
  }
  CHECK(a.metrics.makespan == b.metrics.makespan);
  CHECK(a.metrics.bubble_ratio == b.metrics.bubble_ratio);
  CHECK(a.metrics.bubble_ratio_span == b.metrics.bubble_ratio_span);
  CHECK(a.metrics.comm.exposed_comm == b.metrics.comm.exposed_comm);
  CHECK(a.metrics.memory.peak_activation == b.metrics.memory.peak_activation);
  CHECK(a.events == b.events);
}

}  // namespace bubblesim::testing
