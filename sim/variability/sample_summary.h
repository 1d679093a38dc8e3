#pragma once
// SampleSummary: the distribution of one metric over Monte Carlo samples: mean, standard
// deviation, median and 95th percentile (docs/variability.md).

#include <cstddef>
#include <vector>

namespace bubblesim {

struct SampleSummary {
  std::size_t count = 0;
  double mean = 0.0;
  double sd = 0.0;  // sample standard deviation (n - 1 in the denominator; 0 for one sample)
  double p50 = 0.0;
  double p95 = 0.0;
  double min = 0.0;
  double max = 0.0;
  /// The standard error of the mean, sd / sqrt(count): the Monte Carlo error of `mean`.
  double standard_error() const;
};

/// Quantile q in [0, 1] of sorted values by linear interpolation between order statistics
/// (Hyndman and Fan's type 7, numpy's default): position q (n - 1).
double quantile_of_sorted(const std::vector<double>& sorted, double q);

/// The summary of `values` (in sample order; the result does not depend on it). The mean is
/// values[0] plus the mean deviation from it, so n equal values give exactly that value.
SampleSummary summarize(const std::vector<double>& values);

}  // namespace bubblesim
