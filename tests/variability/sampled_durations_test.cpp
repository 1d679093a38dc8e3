// SampledDurations: cv 0 changes nothing, stragglers stay and noise multiplies on top, op costs
// combine their cvs, and `per` and the correlations give the latent correlations they promise.
#include "sim/variability/sampled_durations.h"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/engine/op_index.h"
#include "variability_test_support.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

/// A table with its index and uniform per-stage costs.
struct Indexed {
  Table table;
  OpIndex index;
  std::vector<StageCost> costs;
  Indexed(Table t, const StageCost& c)
      : table(std::move(t)),
        index(table),
        costs(CostProfile::uniform(table.stages / table.chunks, c).for_table(table.chunks)) {}
  std::int32_t device_of(std::uint32_t n) const {
    std::int32_t d = 0;
    while (n >= index.device_end(d)) ++d;
    return d;
  }
};

std::vector<Time> durations(const Indexed& g, const std::shared_ptr<const VariabilitySpec>& s,
                            std::uint64_t sample, std::vector<double> slowdown = {}) {
  std::vector<Time> out;
  SampledDurations(s, sample, nullptr, std::move(slowdown)).fill(g.index, g.costs, 0, out);
  return out;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

TEST_CASE("cv 0 gives the stage costs and the stragglers' slowdown exactly") {
  const StageCost c = stage_cost_ms(1.3, 2.1, 0.7);
  const Indexed g(generate("zb-h1", 4, 8, c), c);
  std::vector<Time> expected;
  CostDurations({1.0, 1.5, 1.0, 1.0}).fill(g.index, g.costs, 0, expected);
  CHECK(durations(g, spec_with(0.0, 1, JitterDistribution::Lognormal), 3, {1.0, 1.5, 1.0, 1.0}) ==
        expected);
}

TEST_CASE("a straggler stays a fixed slowdown and the noise multiplies on top") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 1.0);
  const Indexed g(generate("1f1b", 4, 8, c), c);
  auto s = spec_with(0.1, 1, JitterDistribution::Gamma);
  for (std::uint64_t sample : {0u, 1u, 17u}) {
    const std::vector<Time> healthy = durations(g, s, sample);
    const std::vector<Time> slow = durations(g, s, sample, {1.0, 2.0, 1.0, 1.0});
    std::vector<Time> deterministic;
    CostDurations().fill(g.index, g.costs, 0, deterministic);
    bool varied = false;
    for (std::uint32_t n = 0; n < g.index.size(); ++n) {
      if (g.device_of(n) == 1) {
        // round(2 t f) against 2 round(t f): at most a picosecond apart.
        CHECK(std::llabs(slow[n].ps() - 2 * healthy[n].ps()) <= 1);
      } else {
        CHECK(slow[n] == healthy[n]);
      }
      varied = varied || healthy[n] != deterministic[n];
    }
    CHECK(varied);
  }
}

TEST_CASE("an op made of several costs takes their cost-weighted cv") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 1.0);
  const Indexed g(generate("1f1b", 2, 4, c), c);  // B runs B and W as one op
  const Indexed h(generate("zb-h1", 2, 4, c), c);
  auto s = std::make_shared<VariabilitySpec>();
  s->cv = {0.02, 0.04, 0.1, 0.0, 0.0};
  SampledDurations model(s, 0, nullptr);
  CHECK(model.op_cv(g.index, g.costs, Op::forward(0, 0)) == doctest::Approx(0.02));
  CHECK(model.op_cv(g.index, g.costs, Op::backward(0, 0)) ==
        doctest::Approx((0.04 * 2 + 0.1 * 1) / 3));
  CHECK(model.op_cv(h.index, h.costs, Op::backward(0, 0)) == doctest::Approx(0.04));
  CHECK(model.op_cv(h.index, h.costs, Op::weight(0, 0)) == doctest::Approx(0.1));
}

TEST_CASE("correlation: within a device w, across devices a (latent = factor's for normal)") {
  const StageCost c = stage_cost_ms(1.0, 1.0, 1.0);
  const Indexed g(generate("zb-h1", 2, 4, c), c);
  const std::uint32_t f0 = g.index.find(OpKind::Forward, 0, 0);
  const std::uint32_t f0b = g.index.find(OpKind::Forward, 0, 1);
  const std::uint32_t b0 = g.index.find(OpKind::Backward, 0, 0);
  const std::uint32_t f1 = g.index.find(OpKind::Forward, 1, 0);
  struct Case {
    JitterUnit per;
    double w, a;
    double same_kind, same_device, across;  // expected correlations
  };
  // n = 4000 samples: the sampling error of a correlation is about (1 - r^2) / sqrt(n) <= 0.016.
  for (const Case& k : {Case{JitterUnit::Op, 0.0, 0.0, 0.0, 0.0, 0.0},
                        Case{JitterUnit::Op, 0.6, 0.2, 0.6, 0.6, 0.2},
                        Case{JitterUnit::OpKind, 0.5, 0.3, 1.0, 0.5, 0.3},
                        Case{JitterUnit::Device, 0.0, 0.4, 1.0, 1.0, 0.4}}) {
    CAPTURE(jitter_unit_name(k.per));
    auto s = std::make_shared<VariabilitySpec>();
    s->cv.fill(0.05);
    s->distribution = JitterDistribution::Normal;
    s->per = k.per;
    s->within_device = k.w;
    s->across_devices = k.a;
    std::vector<double> x0, x0b, xb, x1;
    for (std::uint64_t i = 0; i < 4000; ++i) {
      const std::vector<Time> d = durations(g, s, i);
      x0.push_back(d[f0].seconds());
      x0b.push_back(d[f0b].seconds());
      xb.push_back(d[b0].seconds());
      x1.push_back(d[f1].seconds());
    }
    CHECK(std::abs(correlation(x0, xb) - k.same_device) < 0.04);
    CHECK(std::abs(correlation(x0, x1) - k.across) < 0.04);
    CHECK(std::abs(correlation(x0, x0b) - k.same_kind) < 0.04);
  }
}

TEST_CASE("transfers and copies are stretched only when their cv is set") {
  auto s = std::make_shared<VariabilitySpec>();
  s->cv = {0.1, 0.1, 0.1, 0.0, 0.0};
  CHECK_FALSE(SampledDurations(s, 0, nullptr).jitters_network());
  auto t = std::make_shared<VariabilitySpec>(*s);
  t->cv[static_cast<std::size_t>(JitterKind::Transfer)] = 0.2;
  SampledDurations model(t, 0, nullptr);
  CHECK(model.jitters_network());
  CHECK(model.transfer_factor(0, 1, 3, 9, 0) != 1.0);
  CHECK(model.transfer_factor(0, 1, 3, 9, 0) == model.transfer_factor(0, 1, 3, 9, 0));
  CHECK(model.transfer_factor(0, 1, 3, 9, 0) != model.transfer_factor(0, 1, 4, 10, 0));
  CHECK(model.copy_factor(0, 5, 0) == 1.0);
}

TEST_CASE("each iteration of a sample draws anew, reproducibly") {
  const StageCost c = stage_cost_ms(1.0, 2.0, 0.0);
  const Indexed g(generate("1f1b", 4, 8, c), c);
  const auto s = spec_with(0.1, 1, JitterDistribution::Lognormal);
  const SampledDurations model(s, 3, nullptr);
  CHECK(model.varies_by_iteration());
  std::vector<Time> first, second, again;
  model.fill(g.index, g.costs, 0, first);
  model.fill(g.index, g.costs, 1, second);
  model.fill(g.index, g.costs, 1, again);
  CHECK(first != second);
  CHECK(second == again);
  CHECK(first == durations(g, s, 3));
  CHECK(model.transfer_factor(0, 1, 3, 9, 0) == model.transfer_factor(0, 1, 3, 9, 0));
}

TEST_CASE("slowest_of group: a device's draw is the largest of its GPUs' (expected maximum)") {
  // With per: device and gpus_per_device k, every op of a device takes the factor of the largest
  // of k standard normals: for the normal distribution the mean factor is 1 + cv E[max of k],
  // E[max of 8] = 1.42360 (Tippett 1925 / Harter 1961 tables); k = 1 keeps the device's own draw.
  const StageCost c = stage_cost_ms(1.0, 1.0, 1.0);
  const Indexed g(generate("1f1b", 2, 4, c), c);
  const std::uint32_t f0 = g.index.find(OpKind::Forward, 0, 0);
  const std::uint32_t b0 = g.index.find(OpKind::Backward, 0, 3);
  for (const auto& [k, expected_max] : {std::pair{1, 0.0}, std::pair{8, 1.42360}}) {
    CAPTURE(k);
    auto s = std::make_shared<VariabilitySpec>();
    s->cv.fill(0.05);
    s->distribution = JitterDistribution::Normal;
    s->per = JitterUnit::Device;
    s->gpus_per_device = k;
    double mean = 0;
    const int n = 4000;
    for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
      const std::vector<Time> d = durations(g, s, i);
      // One draw for the whole device: the 2 ms backward (B + W) takes the forward's factor.
      CHECK(d[b0].seconds() == doctest::Approx(2 * d[f0].seconds()).epsilon(1e-9));
      mean += d[f0].seconds() / 1e-3 / n;
    }
    // The sd of the largest of 8 normals is about 0.59: sampling error 0.05 x 0.59 / sqrt(4000).
    CHECK(std::abs(mean - (1.0 + 0.05 * expected_max)) < 0.002);
  }
}

TEST_CASE("slowest_of group: transfers and copies take their device's draw in every iteration") {
  // A device's transfers and copies use the D_d of its compute ops (kept per iteration, not drawn
  // again), whatever order the iterations and devices are asked for in: one model asked for
  // iterations 0, 1, 0, 2 against a fresh model's compute factors for each.
  const StageCost c = stage_cost_ms(1.0, 1.0, 1.0);
  const Indexed g(generate("1f1b", 2, 4, c), c);
  auto s = std::make_shared<VariabilitySpec>();
  s->cv.fill(0.05);
  s->distribution = JitterDistribution::Normal;
  s->per = JitterUnit::Device;
  s->gpus_per_device = 8;
  const SampledDurations model(s, 7, nullptr);
  std::vector<double> first;
  for (const std::int32_t iteration : {0, 1, 0, 2}) {
    CAPTURE(iteration);
    std::vector<Time> d;
    SampledDurations(s, 7, nullptr).fill(g.index, g.costs, iteration, d);
    for (const std::int32_t device : {1, 0}) {
      const double factor = d[g.index.find(OpKind::Forward, device, 0)].seconds() / 1e-3;
      CHECK(model.copy_factor(device, 5, iteration) == doctest::Approx(factor).epsilon(1e-9));
      CHECK(model.transfer_factor(device, 1 - device, 3, 9, iteration) ==
            doctest::Approx(factor).epsilon(1e-9));
      if (iteration == 0) first.push_back(factor);
    }
  }
  REQUIRE(first.size() == 4);
  CHECK(first[0] == first[2]);
  CHECK(first[1] == first[3]);
  CHECK(first[0] != first[1]);
}
