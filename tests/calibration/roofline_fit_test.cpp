// Fitting the roofline curve: a profile made by the model itself at a known curve gives that
// curve back, the 'given' column is the model at the scenario's curve, and the per-layer
// breakdown adds up to the fitted times.
#include "sim/calibration/roofline_fit.h"

#include <doctest/doctest.h>

#include "sim/costmodel/op_timing.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

TransformerModel gpt_layer() {
  TransformerModel m;
  m.layers = 4;
  m.hidden = 1024;
  m.attention.heads = 16;
  m.seq_len = 1024;
  m.micro_batch_size = 2;
  m.attention.kind = AttentionKind::Standard;
  m.dtype.name = "fp16";
  m.dtype.bytes = 2;
  return m;
}

GpuSpec a100_like(double gemm_max, double memory) {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(312e12);
  g.memory_bandwidth = Bandwidth::bytes_per_second(2.039e12);
  g.efficiency.kind = EfficiencyModel::Kind::Roofline;
  g.efficiency.gemm_max = gemm_max;
  g.efficiency.memory = memory;
  return g;
}

/// The profile the model predicts at `gpu` for stages of `layers` layers.
MeasuredProfile profile_at(const TransformerModel& m, const GpuSpec& gpu,
                           const std::vector<std::int64_t>& layers, bool with_w) {
  const ComponentWork w = transformer_layer_work(m, Sharding{});
  MeasuredProfile p;
  p.ops = {"forward", "backward_input"};
  if (with_w) p.ops.insert("backward_weight");
  for (std::int64_t n : layers) {
    StageCost c;
    const auto k = static_cast<double>(n);
    c.forward = Time::from_seconds(k * pass_time(w.forward, gpu, 2, false).total());
    c.backward_input = Time::from_seconds(k * pass_time(w.backward_input, gpu, 2, true).total());
    if (with_w)
      c.backward_weight =
          Time::from_seconds(k * pass_time(w.backward_weight, gpu, 2, true).total());
    p.stages.push_back(c);
  }
  return p;
}

}  // namespace

TEST_CASE("a profile made at gemm_max 0.6, memory 0.4 fits back to them") {
  const TransformerModel m = gpt_layer();
  const MeasuredProfile p = profile_at(m, a100_like(0.6, 0.4), {2, 3}, true);
  const RooflineFit fit = fit_roofline(p, m, a100_like(0.85, 0.8), Sharding{}, {2, 3});
  CHECK(fit.fitted_gemm);
  CHECK(fit.fitted_memory);
  CHECK(fit.fitted.gemm_max == doctest::Approx(0.6).epsilon(1e-5));
  CHECK(fit.fitted.memory == doctest::Approx(0.4).epsilon(1e-5));
  CHECK(fit.worst_fitted < 1e-5);
  // The given curve is faster than the measurement on every row.
  REQUIRE(fit.rows.size() == 6);
  for (const RooflineRow& r : fit.rows) CHECK(r.given_s < r.measured_s);
  CHECK(fit.worst_given > 0.1);
  // The breakdown is one layer at the fitted curve: its F items add up to a 2-layer stage / 2.
  double f = 0;
  for (const RooflineItem& it : fit.breakdown)
    if (it.pass == "F") f += it.seconds;
  CHECK(f == doctest::Approx(fit.rows[0].fitted_s / 2.0).epsilon(1e-9));
}

TEST_CASE("without W rows gemm_max is kept and memory is fitted") {
  const TransformerModel m = gpt_layer();
  const MeasuredProfile p = profile_at(m, a100_like(0.85, 0.5), {1}, false);
  const RooflineFit fit = fit_roofline(p, m, a100_like(0.85, 0.8), Sharding{}, {1});
  CHECK_FALSE(fit.fitted_gemm);
  CHECK(fit.fitted.gemm_max == 0.85);
  CHECK(fit.fitted.memory == doctest::Approx(0.5).epsilon(1e-5));
}

TEST_CASE("a one-number efficiency or a stage-count mismatch is refused") {
  const TransformerModel m = gpt_layer();
  const MeasuredProfile p = profile_at(m, a100_like(0.85, 0.5), {1}, false);
  GpuSpec constant = a100_like(0.85, 0.5);
  constant.efficiency.kind = EfficiencyModel::Kind::Constant;
  CHECK_THROWS_AS(fit_roofline(p, m, constant, Sharding{}, {1}), InputError);
  CHECK_THROWS_AS(fit_roofline(p, m, a100_like(0.85, 0.5), Sharding{}, {1, 1}), InputError);
}
