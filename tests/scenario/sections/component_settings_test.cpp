// The keys the engine's behaviours declare (sim/engine/component_kind.h), read where their
// section is (sim/scenario/sections/component_settings.h): `communication.p2p` of the blocking
// sends and `communication.p2p_sync_gap` of the host gaps, with their types, defaults and the
// check across them, and the messages every other key gives.
#include "sim/scenario/sections/component_settings.h"

#include <doctest/doctest.h>

#include "sim/engine/component_kind.h"
#include "tests/scenario/scenario_test_support.h"

using namespace bubblesim;
using namespace bubblesim::scenario_test;

TEST_CASE("component settings: the behaviours' keys of a section, in registration order") {
  CHECK(component_keys("communication") == std::vector<std::string>{"p2p", "p2p_sync_gap"});
  CHECK(component_keys("memory").empty());
  CHECK(component_keys("comm").empty());  // a prefix of a section is not the section
}

TEST_CASE("component settings: given values land in communication.behaviours, typed; no defaults") {
  const Scenario plain = load(kBase + kCosts);
  CHECK(plain.communication.behaviours.all().empty());
  for (const ComponentKind& kind : builtin_components()) {
    if (kind.name != "send-hold") continue;
    CHECK(std::get<std::string>(
              setting_value(plain.communication.behaviours, kind.settings.at(0).spec)) == "async");
  }
  const Scenario given =
      load(kBase + kCosts + "communication: {delay: 1ms, p2p: blocking, p2p_sync_gap: 0.2ms}\n");
  CHECK(given.communication.behaviours.text("communication.p2p") == "blocking");
  CHECK(given.communication.behaviours.duration("communication.p2p_sync_gap") ==
        Time::from_seconds(0.2e-3));
}

TEST_CASE("component settings: errors name the file, the line, the key and what is allowed") {
  // The section's allowed keys list the behaviours' keys where they have always been.
  CHECK(errors(kBase + kCosts + "communication: {p2q: blocking}\n") ==
        std::vector<std::string>{
            "s.yaml:4:17: error: communication.p2q: unknown key 'p2q'; did you mean 'p2p'? "
            "(allowed: model, delay, topology, p2p, p2p_sync_gap, all_to_all)"});
  CHECK(errors(kBase + kCosts + "communication: {p2p: blocking, p2p_sync_gap: 2}\n").size() == 1);
  // The host gaps' check across keys: a gap needs blocking sends.
  CHECK(errors(kBase + kCosts + "communication: {p2p_sync_gap: 0.2ms}\n") ==
        std::vector<std::string>{
            "s.yaml:4:31: error: communication.p2p_sync_gap: the host gap after each blocking "
            "send/receive (Megatron's batch_p2p_sync): it needs 'p2p: blocking' (allowed: a "
            "duration with p2p: blocking, or 0)"});
  CHECK(errors(kBase + kCosts + "communication: {p2p_sync_gap: 0s}\n").empty());
  // A misspelt mode is one error, not also the gap's check reading it as async.
  CHECK(errors(kBase + kCosts + "communication: {p2p: blockin, p2p_sync_gap: 0.2ms}\n") ==
        std::vector<std::string>{
            "s.yaml:4:22: error: communication.p2p: 'blockin' is not allowed; did you mean "
            "'blocking'? (allowed: async, blocking)"});
}
