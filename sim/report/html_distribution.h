#pragma once
// The HTML verdict's distribution plots (docs/variability.md): with variability, a small inline
// SVG histogram of each schedule's sampled iteration times around its own mean, every schedule on
// one shared scale (the same milliseconds per pixel) so that spreads and tails compare at a glance.

#include <optional>
#include <string>
#include <vector>

#include "sim/variability/monte_carlo.h"

namespace bubblesim {

/// The scale every histogram of one report shares: each spans its mean +- `half_width` seconds,
/// the largest distance of any sample from its schedule's mean over `results` (null entries and
/// failed samples skipped); none without samples.
struct SampleAxis {
  double half_width = 0.0;
};
std::optional<SampleAxis> sample_axis(const std::vector<const MonteCarloResult*>& results);

/// An inline SVG histogram of `result`'s iteration times on `axis`, with the mean marked; a title
/// element gives the numbers to screen readers and on hover.
std::string distribution_svg(const MonteCarloResult& result, const SampleAxis& axis);

}  // namespace bubblesim
