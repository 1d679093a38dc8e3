// Zipped axes and constraints of a sweep file (sim/sweep/sweep_shape.h) and the constraint
// expressions (sim/sweep/key_expression.h): which points a sweep keeps, in which order, and the
// errors at the entry that has the problem.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/sweep/key_expression.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;
namespace fs = std::filesystem;

namespace {

// A sweep file and a base scenario in a fresh folder.
struct SweepFiles {
  fs::path dir;
  explicit SweepFiles(const std::string& sweep) {
    dir = fs::temp_directory_path() /
          ("bubblesim-shape-" + std::to_string(std::hash<std::string>{}(sweep)));
    fs::create_directories(dir);
    std::ofstream(dir / "base.yaml") << "name: b\npipeline: {stages: 4, microbatches: 8}\n"
                                        "parallelism: {tp: 2}\ncosts: {forward: 1ms}\n";
    std::ofstream(dir / "sweep.yaml") << sweep;
  }
  ~SweepFiles() { fs::remove_all(dir); }
  SweepSpec load() const { return load_sweep((dir / "sweep.yaml").string()); }
  std::string path() const { return (dir / "sweep.yaml").string(); }
};

// The axis labels of every point, "a/b/c" per point.
std::vector<std::string> points(const SweepSpec& spec) {
  std::vector<std::string> out;
  for (std::int64_t p = 0; p < spec.point_count(); ++p) {
    std::string s;
    const std::vector<std::size_t> c = spec.coordinates(p);
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      s += (a ? "/" : "") + spec.axes[a].labels[c[a]];
    out.push_back(s);
  }
  return out;
}

std::string error_of(const SweepFiles& f) {
  try {
    (void)f.load();
  } catch (const InputError& e) {
    std::string all;
    for (const Diagnostic& d : e.diagnostics()) all += d.render() + "\n";
    return all;
  }
  return "";
}

}  // namespace

TEST_CASE("expressions: precedence, comparisons, logic and division by zero") {
  KeyExpression e("a * b + 2 == 10 and not (c > 3) or a % 4 == 3");
  CHECK(e.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK(e.evaluate({2, 4, 3}) == 1.0);  // 2 * 4 + 2 == 10, not (3 > 3)
  CHECK(e.evaluate({2, 4, 5}) == 0.0);  // c > 3, and 2 % 4 != 3
  CHECK(e.evaluate({7, 0, 9}) == 1.0);  // 7 % 4 == 3
  CHECK(KeyExpression("-x - -2").evaluate({5}) == -3.0);
  CHECK(std::isnan(KeyExpression("1 / x > 0").evaluate({0})));
  // `and` short-circuits: the division is never made.
  CHECK(KeyExpression("x != 0 and 8 / x == 4").evaluate({0}) == 0.0);
  CHECK(KeyExpression("parallelism.tp <= 8").names() == std::vector<std::string>{"parallelism.tp"});
  // "order" is a name, not "or" followed by "der".
  CHECK(KeyExpression("order > 1").names() == std::vector<std::string>{"order"});
  auto offset = [](const std::string& text) {
    try {
      KeyExpression k(text);
    } catch (const KeyExpressionError& error) {
      return static_cast<int>(error.offset());
    }
    return -1;
  };
  CHECK(offset("a = 4") == 2);
  CHECK(offset("(a + 1") == 0);
  CHECK(offset("a + ") == 4);
  CHECK(offset("4GiB > 1") == 0);
  CHECK(offset("a > 1 b") == 6);
}

TEST_CASE("a zip group is one dimension: its axes take their i-th values together") {
  SweepFiles f(
      "base: base.yaml\naxes:\n  pipeline.stages: [1, 2, 4]\n  costs.forward: [1ms, 2ms]\n"
      "  parallelism.dp: [8, 4, 2]\nzip: [[pipeline.stages, parallelism.dp]]\n");
  const SweepSpec spec = f.load();
  // 3 (stages with dp) x 2 (forward) = 6 points; the group stands where its first axis does.
  CHECK(points(spec) ==
        std::vector<std::string>{"1/1ms/8", "1/2ms/8", "2/1ms/4", "2/2ms/4", "4/1ms/2", "4/2ms/2"});
  CHECK(spec.scenario_yaml(3).find("dp: 4") != std::string::npos);
}

TEST_CASE("constraints keep the points of the product where every expression holds") {
  // 256 GPUs: tp x pp x dp == 256 keeps the layouts that use them all; short names tp, pp, dp.
  SweepFiles f(
      "base: base.yaml\naxes:\n  parallelism.tp: [1, 2, 4, 8]\n  pipeline.stages: [1, 2, 4, 8]\n"
      "  parallelism.dp: [4, 8, 16, 32, 64]\nconstraints:\n  - tp * pp * dp == 256\n"
      "  - parallelism.tp <= 4 or pipeline.stages == 8\n");
  const SweepSpec spec = f.load();
  // tp 1: pp 4 dp 64, pp 8 dp 32; tp 2: pp 2 dp 64, pp 4 dp 32, pp 8 dp 16; tp 4: pp 1 dp 64,
  // pp 2 dp 32, pp 4 dp 16, pp 8 dp 8; tp 8 (pp 8 only): dp 4.
  CHECK(points(spec) == std::vector<std::string>{"1/4/64", "1/8/32", "2/2/64", "2/4/32", "2/8/16",
                                                 "4/1/64", "4/2/32", "4/4/16", "4/8/8", "8/8/4"});
  CHECK(spec.point_count() == 10);
  // A key of the base is a constant: parallelism.tp is 2 there.
  SweepFiles g(
      "base: base.yaml\naxes:\n  pipeline.stages: [1, 2, 4, 8]\n"
      "constraints: [parallelism.tp * pipeline.stages == 8, cp == 1]\n");
  CHECK(points(g.load()) == std::vector<std::string>{"4"});
}

TEST_CASE("zip and constraints together") {
  SweepFiles f(
      "base: base.yaml\naxes:\n  pipeline.stages: [1, 2, 4, 8]\n  parallelism.dp: [64, 32, 16, 8]\n"
      "  costs.forward: [1ms, 2ms]\nzip: [[pipeline.stages, parallelism.dp]]\n"
      "constraints: ['pp >= 2']\n");
  CHECK(points(f.load()) == std::vector<std::string>{"2/32/1ms", "2/32/2ms", "4/16/1ms", "4/16/2ms",
                                                     "8/8/1ms", "8/8/2ms"});
}

TEST_CASE("zip and constraint errors name the entry") {
  const std::string axes =
      "base: base.yaml\naxes:\n  pipeline.stages: [1, 2, 4]\n"
      "  parallelism.dp: [8, 4]\n  costs.forward: [1ms, x]\n";
  CHECK(error_of(SweepFiles(axes + "zip: [[pipeline.stages, parallelism.dp]]\n"))
            .find(":6:7: error: zip[0]: the axes of a zip group take their values together and "
                  "need as many each: pipeline.stages has 3, parallelism.dp has 2") !=
        std::string::npos);
  CHECK(error_of(SweepFiles(axes + "zip: [[pipeline.stages, nope]]\n"))
            .find("zip[0][1]: 'nope' is not an axis of this sweep") != std::string::npos);
  CHECK(error_of(SweepFiles(axes + "zip: [[pipeline.stages]]\n"))
            .find("a zip group lists two or more axes that advance together, got a list of 1") !=
        std::string::npos);
  CHECK(error_of(SweepFiles(axes + "zip: [[pipeline.stages, pipeline.stages]]\n"))
            .find("already in a zip group") != std::string::npos);
  CHECK(error_of(SweepFiles(axes + "constraints: ['pp * dp = 8']\n"))
            .find(":6:15: error: constraints[0]: 'pp * dp = 8': '=' is not a comparison: write "
                  "'==' (at character 9)") != std::string::npos);
  CHECK(error_of(SweepFiles(axes + "constraints: ['costs.forward > 1']\n"))
            .find("reads the axis 'costs.forward', whose value '1ms' is not a number") !=
        std::string::npos);
  CHECK(error_of(SweepFiles(axes + "constraints: ['layers > 1']\n"))
            .find("'layers' is neither an axis") != std::string::npos);
  CHECK(error_of(SweepFiles(axes + "constraints: ['pp > 8']\n"))
            .find("constraints: no point of the 12 the axes make satisfies the constraints "
                  "(pp > 8)") != std::string::npos);
  CHECK(error_of(SweepFiles(axes + "constraints: ['8 / (pp - 1) > 1']\n"))
            .find("'8 / (pp - 1) > 1' divides by zero at pipeline.stages = 1") !=
        std::string::npos);
}
