// `bubblesim calibrate` with a GPU curve (docs/calibration.md): the zero-bubble paper's profiled
// 1.5B layers against the a100-80g roofline, the fitted curve and one layer's kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

namespace {

const char* const kCalibrate1p5b =
    "calibrate scenarios/calibration/zb_1.5b_a100.csv --model "
    "scenarios/calibration/zb_1.5b_a100.yaml --layers-per-stage 3";

std::string line_with(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const std::size_t start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

}  // namespace

TEST_CASE("calibrate fits the roofline curve and lists one layer's kernels") {
  Result r = run(kCalibrate1p5b);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("roofline model vs measured profile") != std::string::npos);
  // W is weight-gradient GEMMs only (the bias sums are in B), so gemm_max fits it exactly.
  CHECK(line_with(r.out, "backward_weight      0").find("1.000") != std::string::npos);
  CHECK(line_with(r.out, "fitted: gemm_max").find("(to the W rows)") != std::string::npos);
  CHECK(r.out.find("as a scenario: cluster.gpu.efficiency: {gemm_max: ") != std::string::npos);
  // activation_fusion: forward_unfused: 46 bytes per element of T x f = 6144 x 9216, by hand
  // 2604662784 bytes; fused in B: 6 bytes, 339738624.
  CHECK(line_with(r.out, "F     mlp_activation ").find("2604.7 MB") != std::string::npos);
  CHECK(line_with(r.out, "B     mlp_activation_grad").find("339.7 MB") != std::string::npos);
  // The one-number fit follows for comparison.
  CHECK(r.out.find("the one-number model") != std::string::npos);
}

TEST_CASE("calibrate --efficiency replaces the curve by one number") {
  Result r = run(std::string(kCalibrate1p5b) + " --efficiency 0.5");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("roofline model") == std::string::npos);
  CHECK(r.out.find("efficiency 0.5") != std::string::npos);
}

TEST_CASE("the held-out scenarios carry the curve calibrate fits to the 1.5B profile") {
  Result fit = run(kCalibrate1p5b);
  REQUIRE(fit.code == 0);
  const std::string curve = line_with(fit.out, "as a scenario: cluster.gpu.efficiency: ");
  const std::string gemm = curve.substr(curve.find("gemm_max: "), 16);  // "gemm_max: 0.8129"
  const std::string memory = curve.substr(curve.find("memory: "), 14);  // "memory: 0.8001"
  for (const char* file : {"scenarios/calibration/zb_6.2b_a100_fitted.yaml",
                           "scenarios/calibration/korthikanti_22b_a100_fitted.yaml"}) {
    CAPTURE(file);
    const std::string text = slurp(std::string(BUBBLESIM_SOURCE_DIR) + "/" + file);
    CHECK(text.find(gemm) != std::string::npos);
    CHECK(text.find(memory) != std::string::npos);
  }
}

TEST_CASE("held out: the 6.2B layers at the 1.5B curve are within 10% of Table 9") {
  // What calibration must show (docs/calibration.md): given/measured of F, B and W.
  Result r =
      run("calibrate scenarios/calibration/zb_6.2b_a100.csv --model "
          "scenarios/calibration/zb_6.2b_a100_fitted.yaml --layers-per-stage 4");
  REQUIRE(r.code == 0);
  for (const char* op : {"forward ", "backward_input ", "backward_weight "}) {
    CAPTURE(op);
    const std::string line = line_with(r.out, std::string(op) + "     ");
    REQUIRE(!line.empty());
    // Columns: op stage layers given fitted measured given/measured fitted/measured.
    std::istringstream in(line);
    std::string name;
    double stage = 0, layers = 0, given = 0, fitted = 0, measured = 0;
    in >> name >> stage >> layers >> given >> fitted >> measured;
    CHECK(std::abs(given / measured - 1.0) < 0.10);
  }
}
