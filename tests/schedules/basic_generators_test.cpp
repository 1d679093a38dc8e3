#include <doctest/doctest.h>

#include "generator_test_support.h"
#include "schedules/builtin_generators.h"
#include "schedules/registry.h"
#include "schedules/validator.h"

using namespace bubblesim;

namespace {

/// T_F = 1 ns, full backward T_B = 2 ns, no W.
GeneratorInput input(int p, int m) {
  StageCost c;
  c.forward = Time::from_ps(1000);
  c.backward_input = Time::from_ps(2000);
  return testing::input(p, m, {}, c);
}

std::string order(const std::vector<Op>& ops) {
  std::string s;
  for (const Op& op : ops) s += (s.empty() ? "" : " ") + to_string(op);
  return s;
}

}  // namespace

TEST_CASE("gpipe runs all forwards then all backwards on every device") {
  Registry r = builtin_registry();
  Table t = r.find("gpipe")->generate(input(3, 2));
  CHECK(validate_table(t).empty());
  CHECK(order(t.device_ops[1]) == "F1.0 F1.1 B1.0 B1.1");
  Formula f = r.find("gpipe")->formula(input(3, 2));
  CHECK(*f.bubble_ratio == doctest::Approx(2.0 / 4.0));
  CHECK(*f.peak_activation_units == 2);
}

TEST_CASE("1f1b warms up with p-r-1 forwards then alternates") {
  Registry r = builtin_registry();
  Table t = r.find("1f1b")->generate(input(4, 6));
  CHECK(validate_table(t).empty());
  CHECK(order(t.device_ops[0]) == "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 B0.3 B0.4 B0.5");
  CHECK(order(t.device_ops[3]) == "F3.0 B3.0 F3.1 B3.1 F3.2 B3.2 F3.3 B3.3 F3.4 B3.4 F3.5 B3.5");
  CHECK(*r.find("1f1b")->formula(input(4, 6)).peak_activation_units == 4);
}

TEST_CASE("1f1b with fewer microbatches than stages stays valid") {
  Registry r = builtin_registry();
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 8; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK(validate_table(r.find("1f1b")->generate(input(p, m))).empty());
      CHECK(validate_table(r.find("gpipe")->generate(input(p, m))).empty());
    }
  }
}
