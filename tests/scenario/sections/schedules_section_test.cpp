// The `schedules` section reader.
#include "sim/scenario/sections/schedules_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("schedules: absent = every registered generator with its defaults") {
  Scenario sc = load(kBase + kCosts);
  REQUIRE(sc.schedules.size() == 3);
  for (const ScheduleRequest& r : sc.schedules) CHECK(r.defaulted);
  CHECK(sc.schedules[2].name == "interleaved");
  // Defaults are filled, except the optional ones ("derive it").
  CHECK(sc.schedules[2].params.integer("chunks") == 2);
  CHECK_FALSE(sc.schedules[2].params.has("group"));
  CHECK(sc.schedules[2].params.text("order") == "depth-first");
  Scenario one = load(kBase + kCosts + "schedules: gpipe\n");
  REQUIRE(one.schedules.size() == 1);
  CHECK_FALSE(one.schedules[0].defaulted);
}

TEST_CASE("schedule parameters are typed, checked and defaulted") {
  Scenario sc = load(
      kBase + kCosts +
      "schedules:\n"
      "  - gpipe\n"
      "  - {name: interleaved, params: {chunks: 4, group: 2, eager: true, order: breadth-first, "
      "slack: 1ms, ratio: 0.25}}\n");
  REQUIRE(sc.schedules.size() == 2);
  const ParamValues& p = sc.schedules[1].params;
  CHECK(p.integer("chunks") == 4);
  CHECK(p.integer("group") == 2);
  CHECK(p.boolean("eager"));
  CHECK(p.text("order") == "breadth-first");
  CHECK(p.duration("slack").ps() == 1'000'000'000);
  CHECK(p.real("ratio") == doctest::Approx(0.25));
  CHECK(sc.schedules[1].where.line == 6);
}

TEST_CASE("schedule errors") {
  CHECK(errors(kBase + kCosts + "schedules: [{name: interleaved, params: {chunk: 3}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:42: error: schedules[0].params.chunk: unknown parameter 'chunk'; did you "
            "mean 'chunks'? (allowed: chunks, group, eager, order, slack, ratio)"});
  CHECK(
      errors(kBase + kCosts + "schedules: [{name: interleaved, params: {chunks: 0}}]\n") ==
      std::vector<std::string>{
          "s.yaml:4:50: error: schedules[0].params.chunks: 0 is not allowed: must be at least 1"});
  CHECK(errors(kBase + kCosts + "schedules: [{name: interleaved, params: {eager: yes}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:49: error: schedules[0].params.eager: expected true or false, got 'yes'"});
  CHECK(errors(kBase + kCosts + "schedules: [{name: gpipe, params: {x: 1}}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:36: error: schedules[0].params.x: unknown parameter 'x' (no parameters are "
            "allowed here)"});
  CHECK(errors(kBase + kCosts + "schedules: [{nam: gpipe}]\n") ==
        std::vector<std::string>{
            "s.yaml:4:14: error: schedules[0].nam: unknown key 'nam'; did you mean 'name'? "
            "(allowed: name, params)"});
  CHECK(errors(kBase + kCosts + "schedules: []\n") ==
        std::vector<std::string>{"s.yaml:4:12: error: schedules: expected at least one schedule "
                                 "(known: gpipe, 1f1b, interleaved)"});
}
