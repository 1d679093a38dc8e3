// The Monte Carlo summary: mean, sample sd, type-7 quantiles.
#include "sim/variability/sample_summary.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace bubblesim;

TEST_CASE("summarize: mean, sd, p50 and p95 as numpy computes them") {
  // numpy: mean 5.5, std(ddof=1) 3.0276503540974917, percentile 50 -> 5.5, 95 -> 9.55
  const SampleSummary s = summarize({3, 1, 4, 10, 5, 9, 2, 6, 8, 7});
  CHECK(s.count == 10);
  CHECK(s.mean == doctest::Approx(5.5));
  CHECK(s.sd == doctest::Approx(3.0276503540974917));
  CHECK(s.p50 == doctest::Approx(5.5));
  CHECK(s.p95 == doctest::Approx(9.55));
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.standard_error() == doctest::Approx(3.0276503540974917 / std::sqrt(10.0)));
}

TEST_CASE("equal values summarise to exactly that value (cv 0 reproduces the deterministic one)") {
  const double x = 0.123456789012345678;
  const SampleSummary s = summarize(std::vector<double>(1001, x));
  CHECK(s.mean == x);
  CHECK(s.sd == 0.0);
  CHECK(s.p50 == x);
  CHECK(s.p95 == x);
}

TEST_CASE("one sample and no samples") {
  const SampleSummary one = summarize({2.5});
  CHECK(one.mean == 2.5);
  CHECK(one.sd == 0.0);
  CHECK(one.p95 == 2.5);
  CHECK(summarize({}).count == 0);
}
