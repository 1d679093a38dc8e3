// What the engine's behaviours declare (sim/engine/component_kind.h), as the reports show it: the
// rows they add to the metric table (in the CSV columns they always had), their keys in the
// resolved scenario, and the behaviours a simulation engaged with the shortcuts they refused, in
// the JSON report and in `explain`.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "report_run_support.h"
#include "schedules/builtin_generators.h"
#include "sim/report/explain_report.h"
#include "sim/report/json_report.h"
#include "sim/report/metric_table.h"
#include "sim/runner/explain.h"

using namespace bubblesim;

namespace {

const std::string kBase = R"(
name: behaviours
pipeline: {stages: 2, microbatches: 4}
costs: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms}
schedules: [1f1b]
)";

testing::Ran run_yaml(const std::string& yaml) {
  const Registry registry = builtin_registry();
  testing::Ran r;
  r.scenario = load_scenario_string(yaml, "behaviours.yaml", registry);
  r.result = run_scenario(r.scenario, registry);
  return r;
}

std::ptrdiff_t position(const std::string& name) {
  const std::vector<Metric>& table = metric_table();
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const Metric& m) { return m.name() == name; });
  REQUIRE(it != table.end());
  return it - table.begin();
}

}  // namespace

TEST_CASE("behaviours' rows: in the metric table where their columns have always been") {
  // Blocking sends' and host gaps' rows follow samples_per_s, and the gradient buckets' row
  // follows them, as before they were the behaviours' own.
  const std::ptrdiff_t samples = position("simulation.samples_per_s");
  CHECK(position("simulation.blocked_send_s") == samples + 1);
  CHECK(position("simulation.host_gap_s") == samples + 2);
  CHECK(position("simulation.dp_sm_slowdown_s") == samples + 3);
  const Metric& blocked = *find_metric("simulation.blocked_send_s");
  CHECK(blocked.unit == MetricUnit::Seconds);
  CHECK(blocked.direction == MetricDirection::LowerIsBetter);
  CHECK(blocked.column.empty());  // in its section, not in the level table
}

TEST_CASE("behaviours in the JSON report: their keys, their numbers, who refused what") {
  const testing::Ran async =
      run_yaml(kBase + "communication: {model: fixed-delay, delay: 0.5ms}\n");
  const nlohmann::json a = scenario_report_json(async.scenario, async.result);
  // The declared keys: p2p at its default (it is reported so), no gap.
  CHECK(a["scenario"]["communication"]["p2p"] == "async");
  CHECK_FALSE(a["scenario"]["communication"].contains("p2p_sync_gap_s"));
  const nlohmann::json& ar = a["results"][0];
  CHECK(ar["components"]["engaged"] == nlohmann::json::array());
  CHECK(ar["components"]["refused"] == nlohmann::json::object());
  CHECK(ar["simulation"]["blocked_send_s"] == 0.0);  // always a number
  CHECK(ar["simulation"]["host_gap_s"].is_null());   // absent without a gap

  const testing::Ran gap = run_yaml(
      kBase +
      "communication: {model: fixed-delay, delay: 0.5ms, p2p: blocking, p2p_sync_gap: 0.25ms}\n");
  const nlohmann::json g = scenario_report_json(gap.scenario, gap.result);
  CHECK(g["scenario"]["communication"]["p2p"] == "blocking");
  CHECK(g["scenario"]["communication"]["p2p_sync_gap_s"].get<double>() == doctest::Approx(0.25e-3));
  const nlohmann::json& gr = g["results"][0];
  CHECK(gr["components"]["engaged"] == nlohmann::json({"send-hold", "host-gap"}));
  // Blocking sends come first in the registration order: they refuse the list replay and the
  // streamed replay; a later iteration is still the first one shifted.
  CHECK(gr["components"]["refused"] ==
        nlohmann::json({{"list-replay", "send-hold"}, {"stream-replay", "send-hold"}}));
  // 1F1B, p = 2, m = 4, F = B = W = 1 ms (B unsplit: 2 ms), 0.5 ms delay: each of the 4 forwards
  // of device 0 and the 4 backwards of device 1 holds its stream 0.5 ms for its send.
  CHECK(gr["simulation"]["blocked_send_s"].get<double>() == doctest::Approx(2e-3));
  CHECK(gr["simulation"]["host_gap_s"].get<double>() > 0.0);
}

TEST_CASE("behaviours in explain: the line that names them and the shortcuts they refused") {
  const Registry registry = builtin_registry();
  const Scenario async = load_scenario_string(
      kBase + "communication: {model: fixed-delay, delay: 0.5ms}\n", "a.yaml", registry);
  const Generator& g = *registry.find("1f1b");
  const std::string none = explain_report_text(async, g, explain_schedule(async, registry, "1f1b"));
  CHECK(none.find("  engine behaviours: none engaged: every shortcut of the replay open\n") !=
        std::string::npos);
  const Scenario blocking = load_scenario_string(
      kBase + "communication: {model: fixed-delay, delay: 0.5ms, p2p: blocking}\n", "b.yaml",
      registry);
  const ScheduleExplanation e = explain_schedule(blocking, registry, "1f1b");
  const std::string text = explain_report_text(blocking, g, e, 200);
  CHECK(text.find("  engine behaviours: send-hold engaged; shortcuts refused: list-replay (by "
                  "send-hold), stream-replay (by send-hold)\n") != std::string::npos);
  CHECK(explain_report_json(blocking, g, e)["components"]["engaged"] ==
        nlohmann::json({"send-hold"}));
}
