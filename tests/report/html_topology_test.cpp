// The HTML report's topology section (sim/report/html_topology.h): one graph per schedule with
// every vertex of a small topology, links carrying exactly the simulation's per-link bytes and
// busy time, nothing without a topology, the same bytes for the same input.
#include "sim/report/html_topology.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a DGX-like node: a graph per schedule, each link with the simulation's bytes and busy") {
  const Registry registry = builtin_registry();
  const Scenario s = load_scenario_file(
      std::string(BUBBLESIM_SOURCE_DIR) + "/tests/report/topology_graph.yaml", registry);
  const ScenarioRun result = run_scenario(s, registry);
  REQUIRE(result.runs.size() == 2);
  const std::string html = html_topology_section(s, result);
  CHECK(count(html, "<svg class=\"topology\"") == 2);
  CHECK(count(html, "<g class=\"topo-node\"") == 2 * 14);
  CHECK(count(html, "<path class=\"topo-link\"") == 2 * 20);
  CHECK(count(html, "style=\"display:none\"") == 1);  // the second graph waits for the select
  CHECK(html.find("<option>1f1b</option><option>gpipe</option>") != std::string::npos);
  CHECK(html.find("data-vertex=\"gpu7\"") != std::string::npos);
  CHECK(html.find(">d7</text>") != std::string::npos);  // device 7 is placed on gpu7

  static const std::regex link(
      R"re(<path class="topo-link" data-busy-ps="(\d+)" data-bytes="(\d+)")re");
  for (std::size_t i = 0; i < 2; ++i) {
    const ScheduleRun& run = result.runs[i];
    CAPTURE(run.label);
    const std::size_t from = html.find("data-schedule=\"" + run.label + "\"");
    REQUIRE(from != std::string::npos);
    const std::string svg = html.substr(from, html.find("</svg>", from) - from);
    // Every directed link is drawn in exactly one edge: the edges' bytes add up to the
    // simulation's, and the busiest edge is its busiest link.
    std::int64_t bytes = 0, busiest = 0, drawn_bytes = 0, drawn_busiest = 0;
    for (const LinkUsage& u : run.simulation.metrics.comm.links) {
      bytes += u.bytes.count();
      busiest = std::max(busiest, u.busy.ps());
    }
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), link); it != std::sregex_iterator();
         ++it) {
      drawn_busiest = std::max<std::int64_t>(drawn_busiest, std::stoll((*it)[1]));
      drawn_bytes += std::stoll((*it)[2]);
    }
    CHECK(bytes > 0);
    CHECK(drawn_bytes == bytes);
    CHECK(drawn_busiest == busiest);
  }
  CHECK(html == html_topology_section(s, result));  // deterministic
}

TEST_CASE("no topology, no topology section") {
  const Registry registry = builtin_registry();
  const Scenario s = load_scenario_file(
      std::string(BUBBLESIM_SOURCE_DIR) + "/scenarios/quickstart.yaml", registry);
  CHECK(html_topology_section(s, run_scenario(s, registry)).empty());
}
