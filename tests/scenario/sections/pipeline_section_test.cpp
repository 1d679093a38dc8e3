// The labels (name, description) and `pipeline` section readers.
#include "sim/scenario/sections/pipeline_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("pipeline: stages and microbatches, both required and in range") {
  Scenario sc = load("name: t\npipeline: {stages: 65536, microbatches: 1048576}\n" + kCosts);
  CHECK(sc.stages == kMaxStages);
  CHECK(sc.microbatches == kMaxMicrobatches);
  CHECK(errors("name: t\npipeline: {stagse: 2, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:2:12: error: pipeline.stagse: unknown key 'stagse'; did "
                                 "you mean 'stages'? (allowed: stages, microbatches)"});
  CHECK(errors("name: t\npipeline: {stages: eight, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:20: error: pipeline.stages: expected an integer, got 'eight'"});
  CHECK(errors("name: t\npipeline: [2, 4]\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:2:11: error: pipeline: expected a mapping, got a list"});
  CHECK(errors("name: t\npipeline: {stages: 8000000, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:20: error: pipeline.stages: 8000000 is out of range (allowed: 1 to 65536)"});
  CHECK(errors("name: t\npipeline: {stages: 2}\n" + kCosts) ==
        std::vector<std::string>{
            "s.yaml:2:11: error: pipeline: missing required key 'microbatches'"});
  CHECK(errors("name: t\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:1:1: error: missing required key 'pipeline'"});
}

TEST_CASE("labels: a non-empty name, once; an optional description") {
  CHECK(errors(kBase + kCosts + "name: u\n") ==
        std::vector<std::string>{
            "s.yaml:4:1: error: name: duplicate key 'name' (first given at line 1)"});
  CHECK(errors("name: ''\npipeline: {stages: 2, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:1:7: error: name: the name must not be empty"});
  CHECK(errors("pipeline: {stages: 2, microbatches: 4}\n" + kCosts) ==
        std::vector<std::string>{"s.yaml:1:1: error: missing required key 'name'"});
  CHECK(load(kBase + kCosts + "description: two stages\n").labels.description == "two stages");
}
