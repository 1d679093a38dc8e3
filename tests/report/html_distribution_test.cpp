// The HTML verdict's sample histograms (docs/variability.md): one shared scale, bins that count
// the samples, failed samples left out, the numbers in the title.
#include "sim/report/html_distribution.h"

#include <doctest/doctest.h>

#include <string>

using namespace bubblesim;

namespace {

MonteCarloResult samples_at(const std::vector<double>& times, double mean) {
  MonteCarloResult r;
  for (double t : times) r.samples.push_back({RunStatus::Ok, t, 0.0, t});
  r.iteration_time_s.mean = mean;
  r.iteration_time_s.count = times.size();
  return r;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the histograms share one scale: the farthest sample from its own mean") {
  const MonteCarloResult narrow = samples_at({1.0, 1.01, 0.99}, 1.0);
  MonteCarloResult wide = samples_at({2.0, 2.1, 1.95}, 2.0);
  wide.samples.push_back({RunStatus::Deadlock, 9.0, 0.0, 9.0});  // failed: not counted
  const std::optional<SampleAxis> axis = sample_axis({&narrow, nullptr, &wide});
  REQUIRE(axis.has_value());
  CHECK(axis->half_width == doctest::Approx(0.1));
  CHECK_FALSE(sample_axis({nullptr}).has_value());
  CHECK_FALSE(sample_axis({}).has_value());
}

TEST_CASE("a histogram has one bar per occupied bin, the mean line and the numbers") {
  // Three samples in three distinct bins of 24 over mean +- 0.1 s, two in one.
  const MonteCarloResult r = samples_at({0.91, 1.0, 1.0, 1.09}, 1.0);
  const std::string svg = distribution_svg(r, SampleAxis{0.1});
  CHECK(svg.rfind("<svg class=\"dist\"", 0) == 0);
  CHECK(count_of(svg, "<rect") == 3);
  CHECK(count_of(svg, "<line") == 1);
  CHECK(svg.find("over 4 samples") != std::string::npos);
  // The tallest bar (two samples) fills the height less the margin; the others half of it.
  CHECK(svg.find("height=\"26.00\"") != std::string::npos);
  CHECK(count_of(svg, "height=\"13.00\"") == 2);
}
