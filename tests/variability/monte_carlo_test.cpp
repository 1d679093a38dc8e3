// Monte Carlo replays: cv 0 reproduces the deterministic replay exactly (the published tables
// among them), the thread count changes nothing, a two-stage pipeline matches the expected
// maximum of its stages' step times, 1F1B slows down monotonically with the cv, and the
// progress callback sees every sample counted.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/variability/sampled_durations.h"
#include "variability_test_support.h"
#include "zb_table5_rows.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

// E[max(X, Y)] of independent normals X ~ N(mx, vx), Y ~ N(my, vy) (Clark 1961).
double expected_max(double mx, double vx, double my, double vy) {
  const double theta = std::sqrt(vx + vy);
  const double d = (mx - my) / theta;
  return mx * normal_cdf(d) + my * normal_cdf(-d) + theta * normal_pdf(d);
}

}  // namespace

TEST_CASE("cv 0: every sample is the deterministic replay, to the picosecond") {
  const StageCost c = stage_cost_ms(1.3, 2.1, 0.7, 10, 4);
  for (const char* name : {"gpipe", "1f1b", "zb-h1", "zb-h2", "interleaved-1f1b", "zb-v"}) {
    CAPTURE(name);
    const Table t = generate(name, 4, 8, c);
    for (NetworkSpec net : {NetworkSpec{NoCostNetwork{}},
                            NetworkSpec{FixedDelayNetwork{Time::from_seconds(0.2e-3)}}}) {
      EngineInput in = input_for(t, c, net);
      in.compute_slowdown = {1.0, 1.25, 1.0, 1.0};
      const SimulationResult deterministic = simulate(in);
      auto spec = spec_with(0.0, 5, JitterDistribution::Lognormal);
      const MonteCarloResult mc = run_monte_carlo(in, spec, 2);
      CHECK(mc.makespan_s.mean == deterministic.metrics.makespan.seconds());
      CHECK(mc.makespan_s.sd == 0.0);
      CHECK(mc.makespan_s.p95 == deterministic.metrics.makespan.seconds());
      CHECK(mc.bubble_ratio.mean == deterministic.metrics.bubble_ratio);
      EngineInput median = in;
      median.durations = sample_durations(in, spec, mc.median_sample);
      check_identical(simulate(median), deterministic);
    }
  }
}

TEST_CASE("cv 0 reproduces the zero-bubble paper's Table 5 bubble rates") {
  for (const Row& row : read_rows()) {
    CAPTURE(row.model);
    CAPTURE(row.m);
    const StageCost c = stage_cost_ms(row.tf, row.tb, row.tw);
    for (const char* name : {"1f1b", "zb-h1", "zb-h2"}) {
      const Table t = generate(name, row.p, row.m, c);
      EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(row.tcomm * 1e-3)});
      auto spec = spec_with(0.0, 3, JitterDistribution::Gamma);
      const MonteCarloResult mc = run_monte_carlo(in, spec, 1);
      EngineInput median = in;
      median.durations = sample_durations(in, spec, mc.median_sample);
      const SimulationResult r = simulate(median);
      const double rounded = std::round(r.metrics.bubble_ratio_span * 1e4) / 1e4;
      const double expected = std::string(name) == "1f1b"    ? row.bubble_1f1b
                              : std::string(name) == "zb-h1" ? row.bubble_zb_h1
                                                             : row.bubble_zb_h2;
      CHECK(rounded == doctest::Approx(expected).epsilon(1e-9));
      CHECK(mc.makespan_s.mean == simulate(in).metrics.makespan.seconds());
    }
  }
}

TEST_CASE("the same seed and N give identical samples on 1, 2 and 3 threads") {
  const StageCost c = stage_cost_ms(1.0, 1.5, 0.8);
  const Table t = generate("zb-h2", 4, 12, c);
  EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(0.1e-3)});
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv = {0.05, 0.05, 0.08, 0.0, 0.2};
  spec->samples = 37;
  spec->within_device = 0.3;
  spec->across_devices = 0.1;
  const MonteCarloResult one = run_monte_carlo(in, spec, 1);
  for (int threads : {2, 3}) {
    const MonteCarloResult other = run_monte_carlo(in, spec, threads);
    REQUIRE(other.samples.size() == one.samples.size());
    for (std::size_t i = 0; i < one.samples.size(); ++i) {
      CHECK(other.samples[i].makespan_s == one.samples[i].makespan_s);
      CHECK(other.samples[i].bubble_ratio == one.samples[i].bubble_ratio);
    }
    CHECK(other.median_sample == one.median_sample);
    CHECK(other.makespan_s.mean == one.makespan_s.mean);
  }
  CHECK(one.makespan_s.sd > 0.0);
  // A different seed gives different samples.
  auto reseeded = std::make_shared<VariabilitySpec>(*spec);
  reseeded->seed = 2;
  CHECK(run_monte_carlo(in, reseeded, 2).makespan_s.mean != one.makespan_s.mean);
}

TEST_CASE("two stages, many microbatches: the mean makespan is the expected sum of step maxima") {
  // 1F1B on two stages with no communication runs in lock step (derivation in
  // docs/variability.md): with M_k the time both stages start step k,
  //   M_0     = F0(0) + max(F0(1), F1(0) + B1(0))
  //   M_k+1   = M_k + max(B0(k) + F0(k+2), F1(k+1) + B1(k+1))      k = 0 .. m-3
  //   end     = M_m-2 + max(B0(m-2), F1(m-1) + B1(m-1)) + B0(m-1)
  // Every op costs t and varies independently (normal, cv c), so each term is the maximum of
  // independent normals, whose expectation is Clark's formula.
  const int m = 64;
  const double t = 1e-3, c = 0.1, v = (c * t) * (c * t);
  const StageCost cost = stage_cost_ms(1.0, 1.0, 0.0);
  const Table table = generate("1f1b", 2, m, cost);
  auto spec = spec_with(c, 4000, JitterDistribution::Normal);
  const MonteCarloResult mc = run_monte_carlo(input_for(table, cost), spec, 0);
  const double expected = t + expected_max(t, v, 2 * t, 2 * v) +
                          (m - 2) * expected_max(2 * t, 2 * v, 2 * t, 2 * v) +
                          expected_max(t, v, 2 * t, 2 * v) + t;
  const double deterministic = (2 * m + 2) * t;
  CAPTURE(mc.makespan_s.mean);
  CAPTURE(expected);
  CHECK(std::abs(mc.makespan_s.mean - expected) < 4.0 * mc.makespan_s.standard_error());
  // The jitter's cost is far beyond the Monte Carlo error: (m - 2) c t / sqrt(pi) = 3.5 ms.
  CHECK(mc.makespan_s.mean - deterministic > 50.0 * mc.makespan_s.standard_error());
}

TEST_CASE("1F1B, 8 stages x 24 microbatches: the mean rises with cv; p95 >= p50 >= deterministic") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 0.0);
  const Table t = generate("1f1b", 8, 24, c);
  const EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(0.05e-3)});
  const double deterministic = simulate(in).metrics.makespan.seconds();
  double last = deterministic;
  for (double cv : {0.01, 0.02, 0.05, 0.1, 0.2}) {
    CAPTURE(cv);
    const MonteCarloResult mc =
        run_monte_carlo(in, spec_with(cv, 400, JitterDistribution::Lognormal), 0);
    CHECK(mc.makespan_s.mean > last + 2.0 * mc.makespan_s.standard_error());
    CHECK(mc.makespan_s.p95 >= mc.makespan_s.p50);
    CHECK(mc.makespan_s.p50 >= deterministic);
    last = mc.makespan_s.mean;
  }
}

TEST_CASE("the median sample replays to the median makespan") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 1.0);
  const Table t = generate("zb-h1", 4, 8, c);
  const EngineInput in = input_for(t, c);
  auto spec = spec_with(0.05, 101, JitterDistribution::Lognormal);
  const MonteCarloResult mc = run_monte_carlo(in, spec, 2);
  EngineInput median = in;
  median.durations = sample_durations(in, spec, mc.median_sample);
  CHECK(simulate(median).metrics.makespan.seconds() == mc.makespan_s.p50);
}

TEST_CASE("transfer jitter stretches the fixed delay; it needs a transfer cv") {
  const StageCost c = stage_cost_ms(1.0, 1.0, 0.0);
  const Table t = generate("1f1b", 4, 8, c);
  const EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(0.5e-3)});
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv[static_cast<std::size_t>(JitterKind::Transfer)] = 0.3;
  spec->samples = 50;
  const MonteCarloResult mc = run_monte_carlo(in, spec, 2);
  CHECK(mc.makespan_s.sd > 0.0);
  CHECK(mc.makespan_s.mean > simulate(in).metrics.makespan.seconds());
  // Without a network the transfer cv has nothing to stretch.
  const MonteCarloResult ideal = run_monte_carlo(input_for(t, c), spec, 2);
  CHECK(ideal.makespan_s.sd == 0.0);
}

TEST_CASE("a sample replays the same on the list-scheduling path and the event loop") {
  const StageCost c = stage_cost_ms(1.0, 1.5, 0.8);
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv = {0.05, 0.05, 0.08, 0.0, 0.0};
  spec->within_device = 0.2;
  for (const char* name : {"1f1b", "zb-h2", "interleaved-1f1b", "zb-v"}) {
    CAPTURE(name);
    const Table t = generate(name, 4, 8, c);
    EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(0.3e-3)});
    in.durations = sample_durations(in, spec, 5);
    const SimulationResult fast = simulate(in);
    CHECK(fast.list_scheduled);
    in.path = ReplayPath::EventLoop;
    const SimulationResult loop = simulate(in);
    CHECK_FALSE(loop.list_scheduled);
    check_identical(fast, loop);
  }
}

TEST_CASE("jittered transfers are replayed by the event loop (each transfer labelled)") {
  const StageCost c = stage_cost_ms(1.0, 1.5, 0.8);
  auto spec = std::make_shared<VariabilitySpec>();
  spec->cv = {0.05, 0.05, 0.08, 0.0, 0.4};
  const Table t = generate("1f1b", 4, 8, c);
  EngineInput in = input_for(t, c, FixedDelayNetwork{Time::from_seconds(0.3e-3)});
  in.durations = sample_durations(in, spec, 5);
  const SimulationResult a = simulate(in);
  CHECK_FALSE(a.list_scheduled);
  in.path = ReplayPath::EventLoop;
  check_identical(a, simulate(in));
}

TEST_CASE("the samples tell their progress, the last one always, the result unchanged") {
  const StageCost c = stage_cost_ms(1.3, 2.1, 0.7, 10, 4);
  const Table t = generate("1f1b", 4, 8, c);
  const EngineInput in = input_for(t, c, NoCostNetwork{});
  auto spec = spec_with(0.05, 40, JitterDistribution::Lognormal);
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    std::vector<std::uint64_t> told;
    std::uint64_t total = 0;
    const MonteCarloResult mc =
        run_monte_carlo(in, spec, threads, [&](std::uint64_t done, std::uint64_t n) {
          told.push_back(done);  // one call at a time: no lock needed here
          total = n;
        });
    REQUIRE(!told.empty());
    CHECK(total == 40);
    CHECK(std::find(told.begin(), told.end(), std::uint64_t{40}) != told.end());
    CHECK(*std::max_element(told.begin(), told.end()) == 40);
    if (threads == 1) CHECK(told.size() == 40);  // one worker never skips a call
    // Progress changes nothing: the same samples as without it.
    const MonteCarloResult quiet = run_monte_carlo(in, spec, threads);
    CHECK(mc.makespan_s.mean == quiet.makespan_s.mean);
    CHECK(mc.median_sample == quiet.median_sample);
  }
}
