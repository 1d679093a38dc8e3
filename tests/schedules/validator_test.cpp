#include "schedules/validator.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "schedules/builtin_generators.h"
#include "schedules/registry.h"

using namespace bubblesim;

namespace {

Table two_stage_table() {
  Table t;
  t.devices = 2;
  t.stages = 2;
  t.microbatches = 2;
  t.placement = Placement::straight(2);
  t.device_ops = {{Op::forward(0, 0), Op::forward(0, 1), Op::backward(0, 0), Op::backward(0, 1)},
                  {Op::forward(1, 0), Op::backward(1, 0), Op::forward(1, 1), Op::backward(1, 1)}};
  return t;
}

bool contains(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p == text; });
}

}  // namespace

TEST_CASE("a well-formed table has no problems") {
  CHECK(validate_table(two_stage_table()).empty());
}

TEST_CASE("every problem of a table is reported at once") {
  Table t = two_stage_table();
  t.device_ops[0].erase(t.device_ops[0].begin() + 1);  // F0.1 missing
  t.device_ops[1].push_back(Op::backward(1, 0));       // B1.0 twice
  std::swap(t.device_ops[1][2], t.device_ops[1][3]);   // B1.1 before F1.1
  auto problems = validate_table(t);
  CHECK(contains(problems, "F0.1 is missing"));
  CHECK(contains(problems, "B1.0 appears 2 times; it must appear once"));
  CHECK(problems.size() >= 3);
}

TEST_CASE("an order that contradicts a dependency on the same device is reported") {
  Table t = two_stage_table();
  std::swap(t.device_ops[1][0], t.device_ops[1][1]);  // B1.0 before F1.0 on device 1
  auto problems = validate_table(t);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "device 1: B1.0 (position 0) is listed before F1.0 (position 1), which it depends on");
}

TEST_CASE("a stage placed on a device that does not exist is reported") {
  Table t = two_stage_table();
  t.placement.device_of_stage[0][1] = 5;
  auto problems = validate_table(t);
  CHECK(contains(problems, "stage 1 is placed on device 5, which does not exist (devices 0..1)"));
}

TEST_CASE("an op on the wrong device is reported") {
  Table t = two_stage_table();
  t.placement.device_of_stage[0][1] = 0;
  auto problems = validate_table(t);
  CHECK(
      contains(problems, "device 1 position 0: F1.0 belongs on device 0, where stage 1 is placed"));
}

TEST_CASE("require_valid_table names the schedule and lists the problems") {
  Table t = two_stage_table();
  t.device_ops[0].pop_back();
  try {
    require_valid_table(t, "mine");
    FAIL("expected InvalidTableError");
  } catch (const InvalidTableError& e) {
    CHECK(std::string(e.what()) ==
          "schedule 'mine' is not a valid table (1 problem):\n  B0.1 is missing");
  }
}

TEST_CASE("the registry refuses duplicate names and lists built-ins in order") {
  Registry r = builtin_registry();
  auto names = r.names();
  REQUIRE(names.size() >= 2);
  CHECK(names[0] == "gpipe");
  CHECK(names[1] == "1f1b");
  CHECK(r.origin("gpipe") == "built-in");
  Generator copy = *r.find("gpipe");
  CHECK_THROWS_WITH_AS(r.add(copy),
                       "a generator named 'gpipe' is already registered (from built-in)",
                       std::invalid_argument);
}

TEST_CASE("placement: the stages a device holds and the holders of a stage") {
  Placement v = Placement::v_shape(3);  // device r holds r and 5-r
  CHECK(v.stages_held_by(0) == std::vector<std::int32_t>{0, 5});
  CHECK(v.stages_held_by(2) == std::vector<std::int32_t>{2, 3});
  CHECK(v.holders_of(4) == std::vector<std::int32_t>{1});
  // Two replicas (Chimera-like): stage 0 on devices 0 and 1, each device holding both stages.
  Placement two;
  two.device_of_stage = {{0, 1}, {1, 0}};
  CHECK(two.stages_held_by(1) == std::vector<std::int32_t>{0, 1});
  CHECK(two.holders_of(0) == std::vector<std::int32_t>{0, 1});
  Placement same;
  same.device_of_stage = {{0, 1}, {0, 1}};  // a replica placed like the first counts once
  CHECK(same.holders_of(1) == std::vector<std::int32_t>{1});
  CHECK(same.stages_held_by(0) == std::vector<std::int32_t>{0});
}
