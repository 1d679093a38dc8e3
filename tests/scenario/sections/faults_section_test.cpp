// The `faults` section reader.
#include "sim/scenario/sections/faults_section.h"

#include <doctest/doctest.h>

#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("faults: stragglers per device, link faults between two vertices") {
  Scenario sc = load(kBase + kCosts + kTopology +
                     "faults: {stragglers: [{device: 1, slowdown: 1.5}], "
                     "links: [{between: [gpu0, gpu1], at: 1ms, cut: true}, "
                     "{between: [gpu1, gpu2], at: 0s, bandwidth: 1GB/s}]}\n");
  CHECK(sc.faults.slowdown == std::vector<double>{1.0, 1.5});
  REQUIRE(sc.faults.links.size() == 2);
  CHECK(sc.faults.links[0].a == "gpu0");
  CHECK(sc.faults.links[0].links.size() == 2);  // both directions
  CHECK_FALSE(sc.faults.links[0].bandwidth.has_value());
  CHECK(sc.faults.links[1].bandwidth->bytes_per_second() == doctest::Approx(1e9));
  CHECK(sc.faults.any());
  CHECK_FALSE(load(kBase + kCosts).faults.any());
}

TEST_CASE("faults errors") {
  CHECK(errors(kBase + kCosts + "faults: {stragglers: [{device: 2, slowdown: 2}]}\n") ==
        std::vector<std::string>{"s.yaml:4:32: error: faults.stragglers[0].device: device 2 does "
                                 "not exist: the pipeline has 2 devices (0 to 1)"});
  CHECK(errors(kBase + kCosts + "faults: {links: [{between: [a, b], at: 1ms, cut: true}]}\n") ==
        std::vector<std::string>{"s.yaml:4:17: error: faults.links: link faults need a topology "
                                 "(communication.model: topology)"});
  CHECK(errors(kBase + kCosts + kTopology +
               "faults: {links: [{between: [gpu0, gpu2], at: 1ms, cut: true}]}\n") ==
        std::vector<std::string>{"s.yaml:7:28: error: faults.links[0].between: there is no link "
                                 "between 'gpu0' and 'gpu2'"});
}
