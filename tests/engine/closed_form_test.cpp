// GPipe and 1F1B against their closed forms: with equal op times and no communication the bubble
// ratio is (p-1)/(m+p-1) in both the idealized table and the simulation; peaks as published.
#include <doctest/doctest.h>

#include "engine_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

TEST_CASE("gpipe and 1f1b bubble ratio equals (p-1)/(m+p-1) for several (p, m)") {
  for (const char* name : {"gpipe", "1f1b"}) {
    for (int p : {1, 2, 4, 8}) {
      for (int m : {1, 4, 8, 24, 32}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        StageCost c = stage_cost_ms(1, 1, 0, 1);
        Table t = generate(name, p, m, c);
        SimulationResult r = replay(t, c);
        REQUIRE(r.status == RunStatus::Ok);
        double expected = static_cast<double>(p - 1) / (m + p - 1);
        CHECK(r.metrics.bubble_ratio == doctest::Approx(expected).epsilon(1e-12));
        CHECK(r.metrics.makespan == Time::from_ps(2'000'000'000LL * (m + p - 1)));
      }
    }
  }
}

TEST_CASE("1f1b peak activation is p-r units on device r, gpipe holds m everywhere") {
  const int p = 4, m = 8;
  StageCost c = stage_cost_ms(1, 2, 0, 1);
  SimulationResult one = replay(generate("1f1b", p, m, c), c);
  for (int r = 0; r < p; ++r)
    CHECK(one.metrics.memory.peak_activation_units_per_device[static_cast<std::size_t>(r)] ==
          p - r);
  CHECK(one.metrics.memory.peak_activation_units == p);
  SimulationResult g = replay(generate("gpipe", p, m, c), c);
  for (double u : g.metrics.memory.peak_activation_units_per_device) CHECK(u == m);
}

TEST_CASE("peaks are counted in units when activations have no size") {
  StageCost c = stage_cost_ms(1, 1, 0);
  SimulationResult r = replay(generate("1f1b", 4, 8, c), c);
  CHECK(r.metrics.memory.peak_activation_units == 4);
  CHECK(r.metrics.memory.peak_activation_units_per_device[3] == 1);
}

TEST_CASE("fixed-delay adds the delay on every cross-stage edge of the critical path") {
  // GPipe with one microbatch: a chain F0 F1 F2 B2 B1 B0 with 4 cross-device edges.
  StageCost c = stage_cost_ms(1, 2, 0);
  Table t = generate("gpipe", 3, 1, c);
  SimulationResult r = replay(t, c, FixedDelayNetwork{Time::from_seconds(0.5e-3)});
  CHECK(r.metrics.makespan == Time::from_seconds((3 * 1 + 3 * 2 + 4 * 0.5) * 1e-3));
  CHECK(r.metrics.comm.exposed_comm ==
        Time::from_seconds(2 * 0.5e-3));  // the middle device waits on one F and one B edge
}
