// The calibration math on hand-written profiles: ratios, the two efficiency fits, the W < F < B
// check and the stage count of a profile CSV.
#include "sim/calibration/calibration.h"

#include <doctest/doctest.h>

#include <string>

#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

// h 64, a 4, s 32, b 2, fp32. Per layer (by hand):
//   F = b s h (24h + 4s) = 4096 * 1664 = 6'815'744 FLOPs
//   B = b s h (24h + 8s) = 4096 * 1792 = 7'340'032 FLOPs
//   W = 24 b s h^2       = 24 * 4096 * 64 = 6'291'456 FLOPs
//   activation (standard attention, 4-byte elements, 1-byte dropout masks; layer_work.h)
//              = s b (66h + 9as) = 64 * 5376 = 344'064 bytes; p2p = s b h 4 = 16'384 bytes
TransformerModel tiny_model() {
  TransformerModel m;
  m.layers = 4;
  m.hidden = 64;
  m.attention.heads = 4;
  m.seq_len = 32;
  m.micro_batch_size = 2;
  m.dtype.name = "fp32";
  m.dtype.bytes = 4;
  m.attention.kind = AttentionKind::Standard;
  return m;
}

GpuSpec tera(double efficiency) {
  GpuSpec g;
  g.flops = FlopRate::flops_per_second(1e12);
  g.efficiency.constant = efficiency;
  return g;
}

const CalibrationRow& row(const CalibrationResult& r, const std::string& op, int stage) {
  for (const CalibrationRow& x : r.rows) {
    if (x.op == op && x.stage == stage) return x;
  }
  FAIL("no row ", op, " ", stage);
  return r.rows.front();
}

}  // namespace

TEST_CASE("a profile at exactly half the model's speed fits efficiency 0.5") {
  // 2 layers per stage at 1 TFLOPS: F 13.631488us, B 14.680064us, W 12.582912us; measured twice
  // that.
  const std::string csv =
      "# hand-written\nop,stage,duration,bytes\n"
      "forward,0,27.262976us,\nforward,1,27.262976us,\n"
      "backward_input,0,29.360128us,\nbackward_input,1,29.360128us,\n"
      "backward_weight,0,25.165824us,\nbackward_weight,1,25.165824us,\n"
      "activation,0,,1376256B\nactivation,1,,688128B\n"
      "p2p,0,,16384B\np2p,1,,16384B\n";
  REQUIRE(profile_stage_count(csv) == 2);
  MeasuredProfile p = read_cost_profile_csv(csv, "half.csv", 2);
  CalibrationResult r = calibrate(p, tiny_model(), tera(1.0), {2, 2});

  CHECK(row(r, "forward", 0).model == doctest::Approx(13.631488e-6).epsilon(1e-12));
  CHECK(row(r, "forward", 0).ratio() == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(row(r, "backward_input", 1).ratio() == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(row(r, "backward_weight", 1).ratio() == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(row(r, "activation", 0).model == doctest::Approx(688128.0));
  CHECK(row(r, "activation", 0).ratio() == doctest::Approx(2.0));
  CHECK(row(r, "activation", 1).ratio() == doctest::Approx(1.0));
  CHECK(row(r, "p2p", 1).ratio() == doctest::Approx(1.0));
  CHECK(r.rows.size() == 10);  // no weight_grad row: the profile has none
  CHECK(r.fitted_efficiency == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(r.total_efficiency == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(r.worst_time_error == doctest::Approx(0.0).epsilon(1e-9));
  REQUIRE(r.ordering.size() == 2);
  CHECK(r.ordering[0].holds());
  CHECK(r.ordering[1].holds());

  const std::string text = calibration_text(r);
  CHECK(text.find("W < F < B: holds on all 2 stage(s)") != std::string::npos);
  CHECK(text.find("fitted efficiency (least squares on the F/B/W times): 0.5 (given 1)") !=
        std::string::npos);
  CHECK(text.find("2.000") != std::string::npos);
}

TEST_CASE("least squares and totals differ when the ops miss the model unevenly") {
  // One layer, one stage: F measured 20us, B 10us, W 5us. FLOPs f = (6815744, 7340032, 6291456).
  const std::string csv =
      "op,stage,duration,bytes\nforward,0,20us,\nbackward_input,0,10us,\nbackward_weight,0,5us,\n";
  MeasuredProfile p = read_cost_profile_csv(csv, "uneven.csv", 1);
  CalibrationResult r = calibrate(p, tiny_model(), tera(0.5), {1});
  const double f[] = {6815744.0, 7340032.0, 6291456.0};
  const double t[] = {20e-6, 10e-6, 5e-6};
  const double ff = f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
  const double ft = f[0] * t[0] + f[1] * t[1] + f[2] * t[2];
  CHECK(r.fitted_efficiency == doctest::Approx(ff / (1e12 * ft)).epsilon(1e-12));
  CHECK(r.total_efficiency ==
        doctest::Approx((f[0] + f[1] + f[2]) / (1e12 * 35e-6)).epsilon(1e-12));
  // The model times use the given efficiency 0.5: F = 6815744 / 0.5e12 s.
  CHECK(row(r, "forward", 0).model == doctest::Approx(13.631488e-6).epsilon(1e-12));
  // W 5us < F 20us, but F 20us >= B 10us.
  REQUIRE(r.ordering.size() == 1);
  CHECK(r.ordering[0].w_below_f);
  CHECK_FALSE(r.ordering[0].f_below_b);
  const std::string text = calibration_text(r);
  CHECK(text.find("W < F < B: violated on 1 of 1 stage(s)") != std::string::npos);
  CHECK(text.find("stage 0: W 5us, F 20us, B 10us: violated (F >= B)") != std::string::npos);
}

TEST_CASE("stage count and errors") {
  CHECK(profile_stage_count("# c\n\nop,stage,duration,bytes\nforward, 3 ,1ms,\nforward,x,1ms,\n") ==
        4);
  CHECK(profile_stage_count("# only comments\n") == 0);
  MeasuredProfile p = read_cost_profile_csv(
      "op,stage,duration,bytes\nforward,0,1ms,\nbackward_input,0,1ms,\n", "p.csv", 1);
  CHECK_THROWS_AS(calibrate(p, tiny_model(), tera(1.0), {1, 1}), InputError);
  TransformerModel with_vocab = tiny_model();
  with_vocab.embedding.vocab = 1000;
  CHECK(calibration_text(calibrate(p, with_vocab, tera(1.0), {1})).find("LM head") !=
        std::string::npos);
}
