#include "sim/variability/sample_summary.h"

#include <algorithm>
#include <cmath>

namespace bubblesim {

double SampleSummary::standard_error() const {
  return count > 0 ? sd / std::sqrt(static_cast<double>(count)) : 0.0;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  if (fraction == 0.0 || sorted[below] == sorted[above]) return sorted[below];
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

SampleSummary summarize(const std::vector<double>& values) {
  SampleSummary s;
  s.count = values.size();
  if (values.empty()) return s;
  // Deviations from the first value: exact for equal values, and no cancellation when the spread
  // is small against the values (seconds of makespan, microseconds of jitter).
  const double origin = values.front();
  double sum = 0.0;
  for (double v : values) sum += v - origin;
  const double mean_deviation = sum / static_cast<double>(values.size());
  s.mean = origin + mean_deviation;
  if (values.size() > 1) {
    double squares = 0.0;
    for (double v : values) {
      const double d = (v - origin) - mean_deviation;
      squares += d * d;
    }
    s.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  s.p50 = quantile_of_sorted(sorted, 0.5);
  s.p95 = quantile_of_sorted(sorted, 0.95);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

}  // namespace bubblesim
