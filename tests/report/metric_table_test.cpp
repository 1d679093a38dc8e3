// The metric table drives every report: each metric appears in the JSON, CSV, text, Markdown and
// HTML reports of a real run, and the sweep CSV's rows without a run have the header's width.
#include "sim/report/metric_table.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/report/html_report.h"
#include "sim/report/json_report.h"
#include "sim/report/metric_format.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

std::size_t fields(const std::string& line) {
  return static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

struct Reports {
  Scenario scenario;
  ScenarioRun result;
};

Reports run_four_stages() {
  Registry registry = builtin_registry();
  Reports r{load_scenario_file(
                std::string(BUBBLESIM_SOURCE_DIR) + "/tests/report/four_stage_1f1b.yaml", registry),
            {}};
  r.result = run_scenario(r.scenario, registry);
  return r;
}

}  // namespace

TEST_CASE("metric names are unique, snake_case keys with a unit suffix where they have one") {
  std::set<std::string> names, columns;
  for (const Metric& m : metric_table()) {
    CAPTURE(m.name());
    CHECK(names.insert(m.name()).second);
    CHECK(columns.insert(m.csv_column()).second);
    CHECK(find_metric(m.name()) == &m);
    CHECK_FALSE(m.help.empty());
    CHECK(m.key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
          std::string_view::npos);
    if (m.unit == MetricUnit::Seconds) CHECK(m.key.find("_s") != std::string_view::npos);
    if (m.unit == MetricUnit::Bytes) CHECK(m.key.find("bytes") != std::string_view::npos);
  }
  CHECK(find_metric("simulation.makespan_s") != nullptr);
  CHECK(find_metric("simulation.no_such_metric") == nullptr);
}

TEST_CASE("every metric appears in every report format") {
  Reports r = run_four_stages();
  REQUIRE(r.result.runs.size() >= 1);
  const nlohmann::json json = scenario_report_json(r.scenario, r.result);
  const std::string csv = scenario_report_csv(r.scenario, r.result);
  ReportOptions unlimited;
  unlimited.width = 0;  // no heading wraps onto two lines
  const std::string text = scenario_report_text(r.scenario, r.result, unlimited);
  const std::string md = scenario_report_markdown(r.scenario, r.result);
  const std::string html = render_html_report(r.scenario, r.result, {});
  const std::string header = csv.substr(0, csv.find('\n'));
  for (const Metric& m : metric_table()) {
    CAPTURE(m.name());
    const std::string level(metric_level_name(m.level)), key(m.key);
    for (const nlohmann::json& result : json["results"]) {
      if (result[level].is_null()) continue;  // no closed form
      CHECK(result[level].contains(key));
      if (m.shape == MetricShape::PerDevice) CHECK(result[level][key].is_array());
    }
    if (m.shape == MetricShape::Scalar)
      CHECK(("," + header + ",").find("," + m.csv_column() + ",") != std::string::npos);
    if (!m.column.empty()) {
      const std::string heading(m.column);
      CHECK(text.find(heading) != std::string::npos);
      CHECK(md.find("| " + heading) != std::string::npos);
      CHECK(html.find("<th>" + heading) != std::string::npos);
    }
  }
}

TEST_CASE("a CSV row without a run has as many fields as the header") {
  const std::string header = csv_report_header();
  CHECK(fields(csv_report_cells_without_run("invalid")) == fields(header));
  Reports r = run_four_stages();
  for (const ScheduleRun& run : r.result.runs)
    CHECK(fields(csv_report_row(r.scenario, run)) == fields(header));
}

TEST_CASE("times share one unit per table with 5 significant digits; bytes use binary units") {
  Scale s = time_scale({1.4325, 0.0012});
  CHECK(s.suffix == "s");
  CHECK(s.write(1.4325) == "1.4325");
  CHECK(s.write(0.0012) == "0.0012");
  Scale ms = time_scale({0.91827863131, 0.0});
  CHECK(ms.suffix == "ms");
  CHECK(ms.write(0.91827863131) == "918.28");
  CHECK(ms.write(0.0) == "0.00");
  CHECK(time_scale({}).suffix == "ms");
  CHECK(time_scale({12e-6}).suffix == "us");
  Scale gib = byte_scale({5.3 * (1 << 30), 1024});
  CHECK(gib.suffix == "GiB");
  CHECK(gib.write(5.3 * (1 << 30)) == "5.30");
  CHECK(byte_scale({100}).write(100) == "100");
  CHECK(format_metric(MetricUnit::Bytes, 67001500000.0) == "62.40 GiB");
  CHECK(format_metric(MetricUnit::Seconds, 0.0012) == "1.2000 ms");
  CHECK(format_metric(MetricUnit::Ratio, 0.243054) == "0.2431");
}
