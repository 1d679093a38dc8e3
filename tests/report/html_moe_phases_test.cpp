// The HTML report's MoE phase lanes and expert memory (sim/report/html_moe_phases.h,
// docs/moe.md): each op's slices placed as the trace places them, with the lengths its stage
// costs give; the expert bytes per device; nothing of it in a report without MoE.
#include "sim/report/html_moe_phases.h"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "report_run_support.h"
#include "sim/report/html_assets.h"
#include "sim/report/html_report.h"

using namespace bubblesim;

namespace {

using testing::Ran;

Ran run(const std::string& rel) { return testing::run_source_scenario(rel); }

const ScheduleRun& run_named(const ScenarioRun& result, const std::string& label) {
  for (const ScheduleRun& r : result.runs)
    if (r.label == label) return r;
  FAIL("no run " << label);
  throw 0;
}

/// (device, op name) -> kind -> [start, end] in microseconds.
using Slices = std::map<std::pair<int, std::string>, std::map<char, std::pair<double, double>>>;
Slices by_op(const nlohmann::json& slices) {
  Slices out;
  for (const auto& s : slices) {
    auto& kinds = out[{s[0].get<int>(), s[4].get<std::string>()}];
    kinds[s[1].get<std::string>()[0]] = {s[2].get<double>(), s[3].get<double>()};
  }
  return out;
}

double us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

}  // namespace

TEST_CASE("MoE phase lanes: every op's experts and all-to-all slices, as its costs give them") {
  const Ran r = run("tests/report/moe_phases.yaml");
  const ScheduleRun& plain = run_named(r.result, "1f1b");
  const Slices lanes = by_op(moe_phase_slices(r.result.resolved, plain, 1e300));
  std::size_t checked = 0;
  for (std::size_t d = 0; d < plain.table.device_ops.size(); ++d) {
    for (std::size_t i = 0; i < plain.table.device_ops[d].size(); ++i) {
      const Op& op = plain.table.device_ops[d][i];
      const OpTiming& t = plain.simulation.timings[d][i];
      const StageCost& c = plain.stage_costs[static_cast<std::size_t>(op.stage)];
      const auto it = lanes.find({static_cast<int>(d), to_string(op)});
      REQUIRE(it != lanes.end());
      const auto& k = it->second;
      // 1F1B pairs nothing: the whole all-to-all is exposed at the op's end (no TP here), none
      // hidden, no SMs taken from compute; the experts run from the op's start.
      const bool forward = op.kind == OpKind::Forward;
      const Time a2a = forward ? c.moe.a2a_forward : c.moe.a2a_backward;
      REQUIRE(k.count('x') == 1);
      CHECK(k.at('x').second == doctest::Approx(us(t.end)));
      CHECK(k.at('x').second - k.at('x').first == doctest::Approx(us(a2a)));
      CHECK(k.count('h') == 0);
      CHECK(k.count('s') == 0);
      const Time experts =
          forward ? c.moe.experts.load.forward
                  : c.moe.experts.load.backward_input + c.moe.experts.load.backward_weight;
      REQUIRE(k.count('e') == 1);
      CHECK(k.at('e').first == doctest::Approx(us(t.start)));
      CHECK(k.at('e').second - k.at('e').first == doctest::Approx(us(experts)));
      ++checked;
    }
  }
  CHECK(checked == plain.table.op_count());

  // DualPipe's fused F&B ops hide part of both halves' all-to-all: hidden + exposed is the two
  // halves' all-to-all, and the SMs the hidden part holds slow the compute.
  const ScheduleRun& dual = run_named(r.result, "dualpipe");
  const Slices fused = by_op(moe_phase_slices(r.result.resolved, dual, 1e300));
  std::size_t pairs = 0;
  for (std::size_t d = 0; d < dual.table.device_ops.size(); ++d) {
    for (const Op& op : dual.table.device_ops[d]) {
      if (op.kind != OpKind::ForwardBackward) continue;
      const auto& k = fused.at({static_cast<int>(d), to_string(op)});
      const Time a2a =
          dual.stage_costs[static_cast<std::size_t>(op.stage)].moe.a2a_forward +
          dual.stage_costs[static_cast<std::size_t>(op.backward_stage)].moe.a2a_backward;
      REQUIRE(k.count('h') == 1);
      const double exposed = k.count('x') ? k.at('x').second - k.at('x').first : 0.0;
      CHECK(k.at('h').second - k.at('h').first + exposed == doctest::Approx(us(a2a)));
      CHECK(k.at('h').second > k.at('h').first);
      CHECK(k.count('s') == 1);
      ++pairs;
    }
  }
  CHECK(pairs > 0);

  // Expert memory per device: its stage's routed experts (one stage per device in 1F1B).
  const nlohmann::json memory = expert_memory_per_device(plain);
  REQUIRE(memory.size() == 2);
  for (std::size_t d = 0; d < 2; ++d) {
    CHECK(memory[d][0].get<std::int64_t>() == plain.stage_costs[d].moe.expert_static.count());
    CHECK(memory[d][1].get<std::int64_t>() == plain.stage_costs[d].moe.expert_activation.count());
    CHECK(memory[d][0].get<std::int64_t>() > 0);
  }

  // The page embeds them and draws them; the cost table has the expert columns.
  const std::string html = render_html_report(r.scenario, r.result, {});
  CHECK(html.find("\"phases\":[[") != std::string::npos);
  CHECK(html.find("drawPhases(g, run, px)") != std::string::npos);
  CHECK(html.find("<th>expert static</th>") != std::string::npos);
}

TEST_CASE("MoE phase lanes: absent without MoE, the script unchanged") {
  const Ran r = run("tests/report/four_stage_1f1b.yaml");
  CHECK(moe_phase_slices(r.result.resolved, r.result.runs[0], 1e300).empty());
  CHECK(expert_memory_per_device(r.result.runs[0]).empty());
  const std::string html = render_html_report(r.scenario, r.result, {});
  CHECK(html.find("\"phases\"") == std::string::npos);
  CHECK(html.find("\"experts\"") == std::string::npos);
  CHECK(html.find("expert static") == std::string::npos);
  CHECK(html.find(std::string("<script>") + html_asset_report_js() + "</script>") !=
        std::string::npos);
}
