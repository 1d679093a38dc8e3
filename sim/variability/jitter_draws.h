#pragma once
// The random numbers of a Monte Carlo sample (docs/variability.md). Every draw is a pure function
// of (the sample's seed, a stream, indices): a counter-based generator, so a sample's durations do
// not depend on the order anything is drawn in or on the thread that draws them, and sample i of
// a seed is the same whatever the number of samples or threads.

#include <cstdint>

#include "schedules/variability_settings.h"

namespace bubblesim {

/// The seed of sample `sample` of a run seeded `seed`.
std::uint64_t sample_seed(std::uint64_t seed, std::uint64_t sample);

/// Independent draw streams of one sample.
enum class DrawStream : std::uint64_t { Global = 1, Device, Op, OpKind, Transfer, Copy };

/// A standard normal variate, a pure function of its arguments (Box-Muller over two 53-bit
/// uniforms from a SplitMix64-style hash).
double standard_normal(std::uint64_t sample_seed, DrawStream stream, std::uint64_t a,
                       std::uint64_t b = 0, std::uint64_t c = 0);

/// The factor with mean 1 and coefficient of variation `cv` at the latent standard normal `z`
/// (a Gaussian copula: the factor is the distribution's quantile at Phi(z)):
///   normal     1 + cv z, clamped to [0, 2] (symmetric: the mean stays 1)
///   lognormal  exp(s z - s^2 / 2), s^2 = ln(1 + cv^2)
///   gamma      shape 1/cv^2, scale cv^2, by the Wilson-Hilferty cube-root transform:
///              (1 - h + sqrt(h) z)^3 / (1 - h^3), h = cv^2 / 9, clamped at 0 (mean exactly 1,
///              variance cv^2 - O(cv^6))
/// cv = 0 gives exactly 1.
double jitter_factor(JitterDistribution distribution, double cv, double z);

}  // namespace bubblesim
