// The HTML report's communication lanes (sim/report/html_comm_lanes.h) on TP 2 x PP 2 x DP 2
// with ZeRO-1 (tests/report/comm_lanes.yaml): what each lane holds and where it is exposed.
#include "sim/report/html_comm_lanes.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "schedules/builtin_generators.h"
#include "sim/report/html_comparison.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

struct Run {
  Scenario scenario;
  ScenarioRun result;
  std::vector<std::unique_ptr<CommLaneRecorder>> recorders;
};

Run run_comm_lanes() {
  static const Registry registry = builtin_registry();
  Run r;
  r.scenario = load_scenario_file(
      std::string(BUBBLESIM_SOURCE_DIR) + "/tests/report/comm_lanes.yaml", registry);
  ScenarioRunHooks hooks;
  hooks.observers = [&r](std::size_t i) {
    if (r.recorders.size() <= i) r.recorders.resize(i + 1);
    r.recorders[i] = std::make_unique<CommLaneRecorder>();
    return std::vector<EngineObserver*>{r.recorders[i].get()};
  };
  r.result = run_scenario(r.scenario, registry, {}, hooks);
  return r;
}

}  // namespace

TEST_CASE("communication lanes: TP inside every op, buckets and sends exposed only off compute") {
  const Run r = run_comm_lanes();
  REQUIRE(r.result.runs.size() == 2);
  for (std::size_t i = 0; i < r.result.runs.size(); ++i) {
    const ScheduleRun& run = r.result.runs[i];
    CAPTURE(run.label);
    const nlohmann::json lanes = comm_lane_slices(r.result.resolved, run, r.recorders[i].get(),
                                                  std::numeric_limits<double>::infinity());
    std::map<std::string, int> count;
    for (const auto& s : lanes) ++count[s[1].get<std::string>()];
    // TP 2 splits every layer: one TP slice at the end of every F and B of the first iteration
    // (2 stages x 8 microbatches x F and B), none for a W.
    CHECK(count["t"] == 2 * 8 * 2);
    // Both devices send (F forward, B back) and sync buckets; ZeRO-1 gathers the updated
    // parameters after each device's step: one slice each.
    CHECK(count["p"] > 0);
    CHECK(count["d"] > 0);
    CHECK(count["z"] == 2);
    // A piece drawn exposed overlaps no compute op of its device; a hidden one lies inside one.
    for (const auto& s : lanes) {
      const std::string kind = s[1];
      if (kind != "p" && kind != "d") continue;
      const auto d = s[0].get<std::size_t>();
      const double from = s[2], to = s[3];
      bool inside = false, overlaps = false;
      for (std::size_t k = 0; k < run.table.device_ops[d].size(); ++k) {
        const double a = run.simulation.timings[d][k].start.seconds() * 1e6;
        const double b = run.simulation.timings[d][k].end.seconds() * 1e6;
        overlaps = overlaps || (a < to - 1e-6 && b > from + 1e-6);
        inside = inside || (a <= from + 1e-6 && b >= to - 1e-6);
      }
      if (s[4] == 1)
        CHECK_FALSE(overlaps);
      else
        CHECK(inside);
    }
  }
}

TEST_CASE("comparison rows: the parts of a schedule's iteration sum to its time") {
  const Run r = run_comm_lanes();
  const Verdict v = make_verdict(r.scenario, r.result);
  const std::vector<ComparisonRow> rows = comparison_rows(r.scenario, v);
  REQUIRE(rows.size() == 2);
  for (const ComparisonRow& row : rows) {
    CHECK(row.compute_s + row.bubble_s + row.imbalance_s + row.p2p_s + row.collectives_s +
              row.a2a_s ==
          doctest::Approx(row.total_s).epsilon(1e-9));
    CHECK(row.collectives_s > 0);  // the gradient sync after the pipeline
    CHECK(row.budget_bytes > row.peak_memory_bytes);
  }
  const std::string html = comparison_chart_html(rows, "caption");
  CHECK(std::count(html.begin(), html.end(), '\n') > 2);
  CHECK(html.find("data-part=\"compute\"") != std::string::npos);
  CHECK(comparison_chart_html({}, "caption").empty());
}
