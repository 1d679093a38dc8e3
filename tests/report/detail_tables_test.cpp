// The reports' detail tables (sim/report/report_rows.h): the expert all-to-all and blocking
// point-to-point metrics, which have no column in the level tables, in small tables of their own
// with the metric table's values, only where a scenario produces them.
#include <doctest/doctest.h>

#include <string>

#include "report_run_support.h"
#include "schedules/builtin_generators.h"
#include "sim/report/html_report.h"
#include "sim/report/metric_table.h"
#include "sim/report/report_rows.h"
#include "sim/report/text_report.h"

using namespace bubblesim;

namespace {

using testing::Ran;

Ran run_yaml(const std::string& yaml) {
  const Registry registry = builtin_registry();
  Ran r;
  r.scenario = load_scenario_string(yaml, "detail.yaml", registry);
  r.result = run_scenario(r.scenario, registry);
  return r;
}

std::vector<const ScheduleRun*> all_runs(const ScenarioRun& result) {
  std::vector<const ScheduleRun*> out;
  for (const ScheduleRun& r : result.runs) out.push_back(&r);
  return out;
}

double metric(const Ran& r, const ScheduleRun& run, const char* name) {
  return *metric_value(*find_metric(name), r.scenario, run).number;
}

const std::string kBlocking = R"(
name: p2p-detail
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 1ms, backward_input: 1ms, backward_weight: 0.5ms}
schedules: [1f1b, zb-h1]
)";

}  // namespace

TEST_CASE("detail tables: the expert all-to-all of a MoE scenario, as the metrics give it") {
  const Ran r = testing::run_source_scenario("tests/report/moe_phases.yaml");
  const std::vector<DetailTable> tables = detail_tables(r.scenario, all_runs(r.result));
  REQUIRE(tables.size() == 1);  // async p2p: no blocked sends, no host gap
  const ReportRows& t = tables[0].rows;
  REQUIRE(t.header.size() == 4);
  CHECK(t.header[0] == "all-to-all");
  CHECK(t.header[1].rfind("all-to-all ", 0) == 0);  // with its unit
  CHECK(t.header[2].rfind("exposed ", 0) == 0);
  CHECK(t.header[3].rfind("slowed compute ", 0) == 0);
  REQUIRE(t.rows.size() == 2);
  const double scale = t.header[1].ends_with(" ms") ? 1e3 : 1.0;
  for (std::size_t i = 0; i < 2; ++i) {
    const ScheduleRun& run = r.result.runs[i];
    CHECK(t.rows[i][0] == run.label);
    CHECK(std::stod(t.rows[i][1]) ==
          doctest::Approx(scale * metric(r, run, "simulation.a2a_s")).epsilon(1e-3));
    CHECK(std::stod(t.rows[i][2]) ==
          doctest::Approx(scale * metric(r, run, "simulation.a2a_exposed_s")).epsilon(1e-3));
  }
  // 1F1B pays its all-to-all exposed; DualPipe's fused pairs hide part of it.
  CHECK(t.rows[0][1] == t.rows[0][2]);
  CHECK(std::stod(t.rows[1][2]) < std::stod(t.rows[1][1]));

  ReportOptions options;
  CHECK(scenario_report_text(r.scenario, r.result, options).find("all-to-all  all-to-all") !=
        std::string::npos);
  CHECK(scenario_report_markdown(r.scenario, r.result, options).find("### Expert all-to-all") !=
        std::string::npos);
  CHECK(render_html_report(r.scenario, r.result, {}).find("<caption>Expert all-to-all") !=
        std::string::npos);
}

TEST_CASE("detail tables: blocking p2p, its host gap column only with a gap, none when async") {
  const Ran async = run_yaml(kBlocking + "communication: {model: fixed-delay, delay: 0.1ms}\n");
  CHECK(detail_tables(async.scenario, all_runs(async.result)).empty());
  CHECK(scenario_report_text(async.scenario, async.result).find("blocked send") ==
        std::string::npos);

  const Ran blocking =
      run_yaml(kBlocking + "communication: {model: fixed-delay, delay: 0.1ms, p2p: blocking}\n");
  std::vector<DetailTable> tables = detail_tables(blocking.scenario, all_runs(blocking.result));
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.header.size() == 2);  // no gap: its column is left out
  CHECK(tables[0].rows.header[0] == "p2p");
  CHECK(tables[0].rows.header[1].rfind("blocked send ", 0) == 0);

  const Ran gap = run_yaml(
      kBlocking +
      "communication: {model: fixed-delay, delay: 0.1ms, p2p: blocking, p2p_sync_gap: 0.2ms}\n");
  tables = detail_tables(gap.scenario, all_runs(gap.result));
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.header.size() == 3);
  CHECK(tables[0].rows.header[2].rfind("host gap ", 0) == 0);
  for (std::size_t i = 0; i < gap.result.runs.size(); ++i) {
    const double host_gap_ms = 1e3 * metric(gap, gap.result.runs[i], "simulation.host_gap_s");
    CHECK(host_gap_ms > 0.0);
    CHECK(std::stod(tables[0].rows.rows[i][2]) == doctest::Approx(host_gap_ms).epsilon(1e-3));
  }
}
