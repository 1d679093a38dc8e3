// The factor distributions (mean 1, the given cv, the right shape, never negative) and the
// counter-based normal draws.
#include "sim/variability/jitter_draws.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

using namespace bubblesim;

namespace {

struct Moments {
  double mean, sd, skewness;
};

// Moments of jitter_factor(d, cv, Z) for Z standard normal, by quadrature over z in [-12, 12]
// (deterministic, so the tolerances below are about the distributions, not sampling error).
Moments moments(JitterDistribution d, double cv) {
  const double step = 1e-3;
  double m1 = 0.0, m2 = 0.0, m3 = 0.0;
  for (double z = -12.0; z <= 12.0; z += step) {
    const double w = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi) * step;
    const double x = jitter_factor(d, cv, z);
    m1 += w * x;
    m2 += w * x * x;
    m3 += w * x * x * x;
  }
  const double var = m2 - m1 * m1;
  const double sd = std::sqrt(var);
  const double third = m3 - 3.0 * m1 * var - m1 * m1 * m1;
  return {m1, sd, third / (sd * sd * sd)};
}

}  // namespace

TEST_CASE("every distribution has mean 1 and the given cv, and its own skewness") {
  for (double cv : {0.01, 0.05, 0.1, 0.3}) {
    CAPTURE(cv);
    const Moments normal = moments(JitterDistribution::Normal, cv);
    CHECK(normal.mean == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(normal.sd == doctest::Approx(cv).epsilon(1e-3));
    CHECK(std::abs(normal.skewness) < 1e-3);
    const Moments lognormal = moments(JitterDistribution::Lognormal, cv);
    CHECK(lognormal.mean == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(lognormal.sd == doctest::Approx(cv).epsilon(1e-6));
    CHECK(lognormal.skewness == doctest::Approx(3.0 * cv + cv * cv * cv).epsilon(1e-3));
    const Moments gamma = moments(JitterDistribution::Gamma, cv);
    CHECK(gamma.mean == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(gamma.sd == doctest::Approx(cv).epsilon(1e-3));
    // Wilson-Hilferty's skewness is 2 cv to first order (the gamma's exactly).
    CHECK(gamma.skewness == doctest::Approx(2.0 * cv).epsilon(0.02));
  }
}

TEST_CASE("a cv of 0 gives exactly 1; no factor is ever negative") {
  for (JitterDistribution d :
       {JitterDistribution::Normal, JitterDistribution::Lognormal, JitterDistribution::Gamma}) {
    CHECK(jitter_factor(d, 0.0, 3.7) == 1.0);
    CHECK(jitter_factor(d, 0.0, -40.0) == 1.0);
    for (double cv : {0.1, 0.5, 1.0}) {
      for (double z : {-40.0, -8.0, -3.0, 0.0, 3.0, 8.0}) {
        CAPTURE(cv);
        CAPTURE(z);
        CHECK(jitter_factor(d, cv, z) >= 0.0);
        CHECK(std::isfinite(jitter_factor(d, cv, z)));
      }
    }
  }
  // The normal is clamped symmetrically, so its mean stays 1 even when the clamp bites.
  CHECK(moments(JitterDistribution::Normal, 1.0).mean == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("the factor rises with the latent normal (a copula keeps rank correlations)") {
  for (JitterDistribution d :
       {JitterDistribution::Normal, JitterDistribution::Lognormal, JitterDistribution::Gamma}) {
    double last = -1.0;
    for (double z = -4.0; z <= 4.0; z += 0.25) {
      const double x = jitter_factor(d, 0.2, z);
      CHECK(x > last);
      last = x;
    }
  }
}

TEST_CASE("standard_normal: a pure function with mean 0 and variance 1, independent streams") {
  const std::uint64_t seed = sample_seed(7, 3);
  CHECK(standard_normal(seed, DrawStream::Op, 5, 2) == standard_normal(seed, DrawStream::Op, 5, 2));
  CHECK(sample_seed(7, 3) != sample_seed(7, 4));
  CHECK(sample_seed(7, 3) != sample_seed(8, 3));
  const int n = 200000;
  double sum = 0.0, squares = 0.0, cross = 0.0, below = 0.0;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::uint64_t>(i);
    const double z = standard_normal(seed, DrawStream::Op, k);
    const double other = standard_normal(seed, DrawStream::Device, k);
    sum += z;
    squares += z * z;
    cross += z * other;
    below += z < -1.6448536269514722 ? 1.0 : 0.0;
  }
  // Sampling errors: mean 1/sqrt(n) = 0.0022, variance sqrt(2/n) = 0.0032, tail sqrt(.05*.95/n).
  CHECK(std::abs(sum / n) < 0.01);
  CHECK(std::abs(squares / n - 1.0) < 0.015);
  CHECK(std::abs(cross / n) < 0.01);
  CHECK(std::abs(below / n - 0.05) < 0.0025);
}
