// The HTML report's iteration tail (sim/report/html_iteration_tail.h): with a gradient sync,
// each device's row continues after its last op with the exposed sync and the optimizer step, so
// that the timeline ends where the makespan does; nothing of it without a sync.
#include "sim/report/html_iteration_tail.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "report_run_support.h"
#include "sim/report/html_assets.h"
#include "sim/report/html_report.h"

using namespace bubblesim;

namespace {

using testing::Ran;

Ran run(const std::string& rel) { return testing::run_source_scenario(rel); }

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

}  // namespace

TEST_CASE(
    "iteration tail: each device's last op, sync end and step end; the last ends the makespan") {
  const Ran r = run("tests/report/moe_phases.yaml");  // dp 4: a gradient sync after the ops
  for (const ScheduleRun& s : r.result.runs) {
    CAPTURE(s.label);
    const nlohmann::json tails = iteration_tails(s);
    REQUIRE(tails.size() == static_cast<std::size_t>(s.table.devices));
    const SyncMetrics& sync = s.simulation.metrics.sync;
    double latest = 0;
    for (const auto& t : tails) {
      const auto d = t[0].get<std::size_t>();
      Time last;
      for (const OpTiming& o : s.simulation.timings[d]) last = std::max(last, o.end);
      CHECK(t[1].get<double>() == doctest::Approx(us(last)));
      CHECK(t[2].get<double>() == doctest::Approx(us(std::max(last, sync.sync_end_per_device[d]))));
      CHECK(t[3].get<double>() >= t[2].get<double>());
      CHECK(t[3].get<double>() == doctest::Approx(us(sync.optimizer_end_per_device[d])));
      latest = std::max(latest, t[3].get<double>());
    }
    // Without the tail the rows ended at the last op, well before the makespan (DualPipe here:
    // 155 ms of ops, 294 ms of makespan); with it the last device's row ends at the makespan.
    CHECK(latest == doctest::Approx(us(s.simulation.metrics.makespan)).epsilon(1e-6));
  }
  const std::string html = render_html_report(r.scenario, r.result, {});
  CHECK(html.find("\"tails\":[[") != std::string::npos);
  CHECK(html.find("if (run.tails) drawTails(g, run, px);") != std::string::npos);
  CHECK(html.find("gradient sync exposed after the last op") != std::string::npos);
}

TEST_CASE("iteration tail: absent without a gradient sync, the script unchanged") {
  const Ran r = run("tests/report/four_stage_1f1b.yaml");
  CHECK(iteration_tails(r.result.runs[0]).empty());
  const std::string html = render_html_report(r.scenario, r.result, {});
  CHECK(html.find("\"tails\"") == std::string::npos);
  CHECK(html.find(std::string("<script>") + html_asset_report_js() + "</script>") !=
        std::string::npos);
}
