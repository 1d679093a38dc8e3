// The idle time split by cause (sim/engine/idle_split.h, docs/outputs.md "Idle time by cause"):
// per device the five parts sum exactly to the idle time; each part shows where its cause is and
// is zero where it is not; the verdict prints the split, the JSON carries it per device and in
// total, the HTML shades the parts.
#include <doctest/doctest.h>

#include <string>

#include "scenario_run_support.h"
#include "sim/report/html_report.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;
using bubblesim::scenario_test::run_named;
using bubblesim::scenario_test::source;

namespace {

ScenarioRun run(const Scenario& sc) { return run_scenario(sc, registry()); }

/// Every part is non-negative and the five sum to idle = makespan - busy + exposed all-to-all.
void check_sums(const ScheduleRun& r) {
  const Metrics& m = r.simulation.metrics;
  const IdleSplit& s = idle_split_of(r);
  REQUIRE(s.idle.size() == m.busy_per_device.size());
  for (std::size_t d = 0; d < s.idle.size(); ++d) {
    CAPTURE(d);
    for (const auto* part : {&s.bubble, &s.imbalance, &s.p2p, &s.collectives, &s.all_to_all})
      CHECK((*part)[d] >= Time::zero());
    CHECK(s.bubble[d] + s.imbalance[d] + s.p2p[d] + s.collectives[d] + s.all_to_all[d] ==
          s.idle[d]);
    CHECK(s.idle[d] == m.makespan - m.busy_per_device[d] + s.all_to_all[d]);
  }
}

std::string yaml(const std::string& costs, const std::string& comm) {
  return "name: idle\npipeline: {stages: 4, microbatches: 8}\ncosts: " + costs +
         "\ncommunication: " + comm + "\nschedules: [gpipe, 1f1b, zb-h1]\n";
}

}  // namespace

TEST_CASE("uniform stages, no delay: all idle is the schedule's own bubble") {
  const Scenario sc =
      load_scenario_string(yaml("{forward: 1ms, backward_input: 1ms, backward_weight: 1ms}",
                                "{model: fixed-delay, delay: 0ms}"),
                           "i.yaml", ".", registry());
  const ScenarioRun result = run(sc);
  for (const ScheduleRun& r : result.runs) {
    CAPTURE(r.label);
    check_sums(r);
    const IdleSplit& s = idle_split_of(r);
    CHECK(IdleSplit::total_seconds(s.imbalance) == 0.0);
    CHECK(IdleSplit::total_seconds(s.p2p) == 0.0);
    CHECK(IdleSplit::total_seconds(s.all_to_all) == 0.0);
    CHECK(IdleSplit::total_seconds(s.bubble) > 0.0);
    // Summed over devices it is the bubble ratio's idle time.
    const Metrics& m = r.simulation.metrics;
    CHECK(IdleSplit::total_seconds(s.idle) ==
          doctest::Approx(m.bubble_ratio * 4 * m.makespan.seconds()));
  }
}

TEST_CASE("a slower stage shows as imbalance, a delay as p2p") {
  const Scenario sc = load_scenario_string(
      yaml("{forward: [1ms, 1ms, 1ms, 2ms], backward_input: [1ms, 1ms, 1ms, 2ms], "
           "backward_weight: 1ms}",
           "{model: fixed-delay, delay: 0.3ms}"),
      "i.yaml", ".", registry());
  const ScenarioRun result = run(sc);
  for (const ScheduleRun& r : result.runs) {
    CAPTURE(r.label);
    check_sums(r);
    const IdleSplit& s = idle_split_of(r);
    CHECK(s.imbalance[3] == Time::zero());  // the slow stage waits for no one's work
    CHECK(s.imbalance[0] > Time::zero());
    CHECK(IdleSplit::total_seconds(s.p2p) > 0.0);
  }
  const nlohmann::json j = scenario_report_json(sc, result);
  const nlohmann::json& sim = j["results"][0]["simulation"];
  CHECK(sim["idle_s_per_device"].size() == 4);
  CHECK(sim["idle_s"].get<double>() ==
        doctest::Approx(sim["idle_bubble_s"].get<double>() + sim["idle_imbalance_s"].get<double>() +
                        sim["idle_p2p_s"].get<double>() + sim["idle_collectives_s"].get<double>() +
                        sim["idle_a2a_s"].get<double>()));
  const std::string text = scenario_report_text(sc, result, ReportOptions{});
  CHECK(text.find("idle time by cause") != std::string::npos);
  CHECK(text.find("imbalance") != std::string::npos);
  const std::string html =
      render_html_report(sc, result, std::vector<const MemoryTimeline*>(result.runs.size()));
  CHECK(html.find("class=\"summary idle-split\"") != std::string::npos);
  CHECK(html.find("data-part=\"imbalance\"") != std::string::npos);
  CHECK(html.find("data-part=\"p2p\"") != std::string::npos);
}

TEST_CASE("gradient sync after the last compute op is exposed collectives") {
  const Scenario sc = load_scenario_file(source("scenarios/llama3-70b-h100.yaml"), registry());
  Scenario one = sc;
  one.schedules.resize(1);
  const ScenarioRun result = run(one);
  check_sums(result.runs.front());
  CHECK(IdleSplit::total_seconds(idle_split_of(result.runs.front()).collectives) > 0.0);
}

TEST_CASE("the expert all-to-all left exposed is its own part") {
  const Scenario sc = load_scenario_file(source("tests/report/moe_phases.yaml"), registry());
  const ScenarioRun result = run(sc);
  for (const ScheduleRun& r : result.runs) {
    CAPTURE(r.label);
    check_sums(r);
  }
  // 1F1B pays its all-to-all exposed; DualPipe's fused ops hide most of it.
  const double one = IdleSplit::total_seconds(idle_split_of(run_named(result, "1f1b")).all_to_all);
  const double dual =
      IdleSplit::total_seconds(idle_split_of(run_named(result, "dualpipe")).all_to_all);
  CHECK(one > 0.0);
  CHECK(dual < one);
}
