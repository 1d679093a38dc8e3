#include "sim/variability/jitter_draws.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace bubblesim {
namespace {

// SplitMix64's output function: a bijection on 64-bit words with full avalanche.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform in (0, 1]: 53 random bits, never 0 (the logarithm below needs that).
double unit_interval(std::uint64_t h) { return (static_cast<double>(h >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

std::uint64_t sample_seed(std::uint64_t seed, std::uint64_t sample) {
  return mix(mix(seed) ^ mix(sample ^ 0x5a3c96e1d2b4f087ull));
}

double standard_normal(std::uint64_t sample_seed, DrawStream stream, std::uint64_t a,
                       std::uint64_t b, std::uint64_t c) {
  std::uint64_t h = mix(sample_seed ^ mix(static_cast<std::uint64_t>(stream)));
  h = mix(h ^ a);
  h = mix(h ^ b);
  h = mix(h ^ c);
  const double u1 = unit_interval(mix(h));
  const double u2 = unit_interval(mix(h ^ 0xd1b54a32d192ed03ull));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double jitter_factor(JitterDistribution distribution, double cv, double z) {
  if (cv == 0.0) return 1.0;
  switch (distribution) {
    case JitterDistribution::Normal:
      return std::clamp(1.0 + cv * z, 0.0, 2.0);
    case JitterDistribution::Lognormal: {
      const double s2 = std::log1p(cv * cv);
      return std::exp(std::sqrt(s2) * z - 0.5 * s2);
    }
    case JitterDistribution::Gamma: {
      const double h = cv * cv / 9.0;
      const double y = std::max(0.0, 1.0 - h + std::sqrt(h) * z);
      return y * y * y / (1.0 - h * h * h);
    }
  }
  return 1.0;
}

}  // namespace bubblesim
