#include "sim/report/html_distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/report/metric_format.h"

namespace bubblesim {
namespace {

constexpr int kBins = 24;
constexpr double kWidth = 144.0, kHeight = 28.0;

bool counted(const SampleOutcome& s) { return s.status == RunStatus::Ok; }

}  // namespace

std::optional<SampleAxis> sample_axis(const std::vector<const MonteCarloResult*>& results) {
  std::optional<SampleAxis> axis;
  for (const MonteCarloResult* r : results) {
    if (r == nullptr) continue;
    for (const SampleOutcome& s : r->samples) {
      if (!counted(s)) continue;
      const double d = std::abs(s.iteration_time_s - r->iteration_time_s.mean);
      axis = SampleAxis{std::max(axis ? axis->half_width : 0.0, d)};
    }
  }
  return axis;
}

std::string distribution_svg(const MonteCarloResult& result, const SampleAxis& axis) {
  std::vector<int> bins(kBins, 0);
  const SampleSummary& t = result.iteration_time_s;
  const double low = t.mean - axis.half_width;
  const double span = axis.half_width > 0.0 ? 2.0 * axis.half_width : 1.0;
  auto x_of = [&](double v) { return (v - low) / span * kWidth; };
  int tallest = 0;
  for (const SampleOutcome& s : result.samples) {
    if (!counted(s)) continue;
    const int b =
        std::clamp(static_cast<int>((s.iteration_time_s - low) / span * kBins), 0, kBins - 1);
    tallest = std::max(tallest, ++bins[static_cast<std::size_t>(b)]);
  }
  std::string svg = fmt::format(
      "<svg class=\"dist\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "role=\"img\"><title>iteration time over {} samples: mean {}, sd {}, p50 {}, p95 {}"
      "</title>",
      kWidth, kHeight, kWidth, kHeight, result.samples.size(),
      format_metric(MetricUnit::Seconds, t.mean), format_metric(MetricUnit::Seconds, t.sd),
      format_metric(MetricUnit::Seconds, t.p50), format_metric(MetricUnit::Seconds, t.p95));
  const double bar = kWidth / kBins;
  for (int b = 0; b < kBins; ++b) {
    const int n = bins[static_cast<std::size_t>(b)];
    if (n == 0 || tallest == 0) continue;
    const double h = (kHeight - 2.0) * n / tallest;
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"#4c78a8\"/>",
        b * bar, kHeight - h, bar - 0.5, h);
  }
  svg += fmt::format(
      "<line x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"0\" y2=\"{1:.0f}\" stroke=\"#d62728\" "
      "stroke-width=\"1.5\"/></svg>",
      std::clamp(x_of(t.mean), 0.0, kWidth), kHeight);
  return svg;
}

}  // namespace bubblesim
