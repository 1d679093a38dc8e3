// The HTML report's aggregation of long timelines (sim/report/html_timeline_bins.h): within the
// op bound every op is embedded; beyond it, utilisation bins, the exact ops of a first stretch and
// the memory as the maximum per bin, with a note on the page.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedules/builtin_generators.h"
#include "sim/engine/memory_timeline.h"
#include "sim/report/html_report.h"
#include "sim/report/html_timeline_bins.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

struct Replayed {
  Scenario scenario;
  ScenarioRun result;
  std::vector<std::unique_ptr<MemoryTimeline>> timelines;
  std::vector<const MemoryTimeline*> memory;
  std::size_t ran = 0;  // ops that ran, all runs together
  std::string html(std::size_t max_ops) const {
    return render_html_report(scenario, result, memory, "", max_ops);
  }
};

std::unique_ptr<Replayed> replay(const std::string& rel) {
  Registry registry = builtin_registry();
  auto r = std::make_unique<Replayed>();
  r->scenario = load_scenario_file(std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel, registry);
  ScenarioRunHooks hooks;
  hooks.observers = [&](std::size_t index) {
    if (r->timelines.size() <= index) r->timelines.resize(index + 1);
    r->timelines[index] = std::make_unique<MemoryTimeline>(r->scenario.stages);
    return std::vector<EngineObserver*>{r->timelines[index].get()};
  };
  r->result = run_scenario(r->scenario, registry, {}, hooks);
  for (const auto& t : r->timelines) r->memory.push_back(t.get());
  for (const ScheduleRun& run : r->result.runs) r->ran += ops_that_ran(run);
  return r;
}

nlohmann::json embedded(const std::string& html) {
  std::size_t begin = html.find("id=\"bubblesim-data\">");
  REQUIRE(begin != std::string::npos);
  begin = html.find('>', begin) + 1;
  return nlohmann::json::parse(html.substr(begin, html.find("</script>", begin) - begin));
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int level(char c) {
  const std::string levels = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return static_cast<int>(levels.find(c));
}

}  // namespace

TEST_CASE("the op bound is shared out, smallest run first") {
  CHECK(exact_op_budgets({10, 20}, 30) == std::vector<std::optional<std::size_t>>(2));
  const auto budgets = exact_op_budgets({5000, 10, 1000}, 600);
  REQUIRE(budgets.size() == 3);
  CHECK(!budgets[1]);  // within its share: every op
  REQUIRE(budgets[0]);
  REQUIRE(budgets[2]);
  CHECK(*budgets[0] + *budgets[2] + 10 <= 600);
  CHECK(*budgets[0] == *budgets[2]);
}

TEST_CASE("within the op bound the HTML report embeds every op and says nothing of bins") {
  const auto r = replay("tests/report/long_timeline.yaml");
  const std::string full = r->html(r->ran);
  CHECK(full == r->html(kHtmlMaxOps));  // the default bound is above this scenario
  CHECK(full.find("class=\"aggregated\"") == std::string::npos);
  const nlohmann::json data = embedded(full);
  for (std::size_t i = 0; i < r->result.runs.size(); ++i) {
    CHECK(!data["runs"][i].contains("aggregate"));
    CHECK(data["runs"][i]["ops"].size() == r->result.runs[i].table.op_count());
  }
}

TEST_CASE("beyond the op bound the HTML report embeds bins, the first ops and memory maxima") {
  const auto r = replay("tests/report/long_timeline.yaml");
  const std::size_t bound = r->ran / 10;
  const std::string full = r->html(r->ran), small = r->html(bound);
  CHECK(small == r->html(bound));  // deterministic
  CHECK(small.size() * 4 < full.size());
  const nlohmann::json data = embedded(small);
  std::size_t exact = 0;
  CHECK(occurrences(small, "<p class=\"aggregated\">") == r->result.runs.size());
  for (std::size_t i = 0; i < r->result.runs.size(); ++i) {
    const ScheduleRun& run = r->result.runs[i];
    const nlohmann::json& j = data["runs"][i];
    REQUIRE(j.contains("aggregate"));
    const nlohmann::json& a = j["aggregate"];
    CHECK(a["ops"] == ops_that_ran(run));
    CHECK(small.find(run.label + ": timeline aggregated: ") != std::string::npos);
    CHECK(a["note"].get<std::string>().find(" bins per device") != std::string::npos);
    // The exact ops are exactly those that start before the window's end.
    const double until = a["exact_until_us"];
    std::size_t before = 0;
    for (const OpTiming& t : run.simulation.timings.all())
      before += t.start.ps() >= 0 && t.start.microseconds() < until ? 1 : 0;
    CHECK(j["ops"].size() == before);
    CHECK(a["exact_ops"] == before);
    CHECK(before > 0);
    exact += before;
    // Per device and kind the bins add up to the busy time, to within a level per bin.
    const double bin_us = a["bin_us"];
    const int bins = a["bins"];
    CHECK(bins <= kHtmlTimelineBins);
    REQUIRE(a["busy"].size() == static_cast<std::size_t>(run.table.devices));
    for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
      double busy_us[4] = {0, 0, 0, 0}, binned_us[4] = {0, 0, 0, 0};
      for (std::size_t k = 0; k < run.table.device_ops[d].size(); ++k) {
        const OpKind kind = run.table.device_ops[d][k].kind;
        const int row = kind == OpKind::Forward    ? 0
                        : kind == OpKind::Backward ? 1
                        : kind == OpKind::Weight   ? 2
                                                   : 3;
        const OpTiming& t = run.simulation.timings[d][k];
        busy_us[row] += (t.end - t.start).microseconds();
      }
      for (int k = 0; k < 4; ++k) {
        const std::string s = a["busy"][d][k];
        REQUIRE(s.size() == static_cast<std::size_t>(bins));
        for (char c : s) binned_us[k] += level(c) / 63.0 * bin_us;
        CHECK(std::abs(binned_us[k] - busy_us[k]) <= bins * bin_us / 63.0);
      }
      CHECK(busy_us[0] > 0);
    }
    // Memory: at most a sample per bin (and the level after the last), the peak kept, and never
    // below the real level.
    const MemoryTimeline& memory = *r->memory[i];
    for (std::int32_t d = 0; d < memory.devices(); ++d) {
      const nlohmann::json& series = j["memory"][d];
      CHECK(series.size() <= static_cast<std::size_t>(kHtmlMemoryBins) + 1);
      double peak = 0;
      for (const auto& s : series) peak = std::max(peak, s[2].get<double>());
      CHECK(peak == static_cast<double>(memory.peak_total(d).count()));
      std::size_t at = 0, below = 0;
      for (const MemorySample& m : memory.samples(d)) {
        while (at + 1 < series.size() && series[at + 1][0].get<double>() <= m.time.microseconds())
          ++at;
        below += series[at][2].get<double>() < static_cast<double>(m.total.count()) ? 1 : 0;
      }
      CHECK(below == 0);
    }
  }
  CHECK(exact <= bound);
}
