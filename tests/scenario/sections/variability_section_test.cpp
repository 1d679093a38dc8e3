// The `variability` section reader and the profile's cv column.
#include "sim/scenario/sections/variability_section.h"

#include <doctest/doctest.h>

#include "schedules/builtin_generators.h"
#include "sim/scenario/cost_profile_csv.h"
#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

namespace {

const std::string kDelay = "communication: {model: fixed-delay, delay: 0.1ms}\n";

std::string source(const std::string& path) {
  return std::string(BUBBLESIM_SOURCE_DIR) + "/" + path;
}

}  // namespace

TEST_CASE("variability: absent, one cv, per kind, and every other key") {
  CHECK_FALSE(load(kBase + kCosts).variability.has_value());
  const Scenario one = load(kBase + kCosts + "variability: {cv: 0.05}\n");
  REQUIRE(one.variability);
  CHECK(one.variability->cv == CvByKind{0.05, 0.05, 0.05, 0.05, 0.05});
  CHECK(one.variability->distribution == JitterDistribution::Lognormal);
  CHECK(one.variability->per == JitterUnit::Op);
  CHECK(one.variability->samples == 200);
  const Scenario all = load(kBase + kCosts + kDelay +
                            "variability:\n"
                            "  cv: {F: 0.01, B: 0.02, W: 0.03, transfers: 0.2}\n"
                            "  distribution: gamma\n"
                            "  per: op-kind\n"
                            "  correlation: {within_device: 0.5, across_devices: 0.25}\n"
                            "  samples: 31\n"
                            "  seed: 9\n");
  REQUIRE(all.variability);
  const VariabilitySpec& v = *all.variability;
  CHECK(v.cv == CvByKind{0.01, 0.02, 0.03, 0.0, 0.2});
  CHECK(v.distribution == JitterDistribution::Gamma);
  CHECK(v.per == JitterUnit::OpKind);
  CHECK(v.within_device == 0.5);
  CHECK(v.across_devices == 0.25);
  CHECK(v.samples == 31);
  CHECK(v.seed == 9);
  CHECK(load(kBase + kCosts + "variability: {cv: 0}\n").variability->noiseless());
}

TEST_CASE("variability errors: ranges, names, keys without an effect") {
  CHECK(errors(kBase + kCosts + "variability: {cv: 1.5}\n") ==
        std::vector<std::string>{
            "s.yaml:4:19: error: variability.cv: 1.5 is out of range (allowed: 0 to 1)"});
  CHECK(errors(kBase + kCosts + "variability: {cv: 0.1, distribution: weibull}\n").size() == 1);
  CHECK(errors(kBase + kCosts + "variability: {cv: {F: 0.1, X: 0.2}}\n").size() == 1);
  CHECK(errors(kBase + kCosts + "variability: {samples: 10}\n") ==
        std::vector<std::string>{
            "s.yaml:4:14: error: variability: variability needs a 'cv' (e.g. cv: 0.05, or per "
            "kind {F, B, W, copies, transfers}), or costs.profile with a cv column"});
  // A transfer cv needs something to stretch; a copies cv needs copies.
  CHECK(errors(kBase + kCosts + "variability: {cv: {transfers: 0.1}}\n")
            .front()
            .find("communication.delay is 0") != std::string::npos);
  CHECK(errors(kBase + kCosts + "variability: {cv: {copies: 0.1}}\n")
            .front()
            .find("set memory.offload") != std::string::npos);
  CHECK(errors(kBase + kCosts + kDelay + "variability: {cv: {transfers: 0.1}}\n").empty());
  // Correlations: within_device has no effect per device; across <= within.
  CHECK(errors(kBase + kCosts +
               "variability: {cv: 0.1, per: device, correlation: {within_device: 0.5}}\n")
            .front()
            .find("within_device has no effect") != std::string::npos);
  CHECK(errors(kBase + kCosts +
               "variability: {cv: 0.1, correlation: {within_device: 0.2, across_devices: 0.5}}\n")
            .front()
            .find("must not exceed within_device") != std::string::npos);
  CHECK(errors(kBase + kCosts +
               "variability: {cv: 0.1, per: device, correlation: {across_devices: 0.5}}\n")
            .empty());
  CHECK(errors(kBase + kCosts + "variability: {cv: 0.1, samples: 0}\n").size() == 1);
}

TEST_CASE("a profile's cv column: read per op and stage; old profiles stay readable") {
  const MeasuredProfile with = read_cost_profile_csv(
      "op,stage,duration,bytes,cv\nforward,0,3ms,,0.02\n"
      "backward_input,0,5ms,,0.04\nactivation,0,,1GiB,\n",
      "p.csv", 1);
  CHECK(with.cv.at("forward") == std::vector<double>{0.02});
  CHECK(with.cv.at("backward_input") == std::vector<double>{0.04});
  CHECK(with.cv.count("activation") == 0);
  const MeasuredProfile without = read_cost_profile_csv(
      "op,stage,duration,bytes\nforward,0,3ms,\nbackward_input,0,5ms,\n", "p.csv", 1);
  CHECK(without.cv.empty());
  auto error_of = [](const std::string& csv) {
    try {
      read_cost_profile_csv(csv, "p.csv", 1);
    } catch (const InputError& e) {
      return e.diagnostics().front().render();
    }
    return std::string();
  };
  CHECK(error_of("op,stage,duration,bytes,cv\nforward,0,3ms,,\nbackward_input,0,5ms,,0.1\n") ==
        "p.csv:2:16: error: the cv of forward on stage 0 must be a number from 0 to 10 (the "
        "coefficient of variation over the repetitions), got ''");
  CHECK(error_of("op,stage,duration,bytes,cv\nforward,0,3ms,,0.1\nbackward_input,0,5ms,,0.1\n"
                 "activation,0,,1GiB,0.1\n") ==
        "p.csv:4:20: error: activation is a size; leave the cv column empty");
  CHECK(error_of("op,stage,duration,bytes,cv\nforward,0,3ms,\n").find("expected 5 columns") !=
        std::string::npos);
}

TEST_CASE("variability without a cv takes the profile's F, B and W cvs per stage") {
  Registry registry = builtin_registry();
  const Scenario sc =
      load_scenario_file(source("tests/data/profile/profiled_noise.yaml"), registry);
  REQUIRE(sc.variability);
  REQUIRE(sc.variability->stage_cv.size() == 2);
  CHECK(sc.variability->cv_of(JitterKind::Forward, 0) == 0.02);
  CHECK(sc.variability->cv_of(JitterKind::Backward, 1) == 0.05);
  CHECK(sc.variability->cv_of(JitterKind::Weight, 1) == 0.07);
  CHECK(sc.variability->cv_of(JitterKind::Transfer, 0) == 0.0);
  // A cv in the scenario wins over the profile's.
  const Scenario given = load_scenario_string(
      "name: t\npipeline: {stages: 2, microbatches: 4}\ncosts: {profile: measured_cv.csv}\n"
      "variability: {cv: 0.1}\n",
      source("tests/data/profile/x.yaml"), source("tests/data/profile"), registry);
  CHECK(given.variability->stage_cv.empty());
  CHECK(given.variability->cv_of(JitterKind::Forward, 0) == 0.1);
}
