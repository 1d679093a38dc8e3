// model.mtp_depth in a scenario (docs/models.md, "Multi-token prediction"): the text report's
// stage-cost table (text, Markdown, HTML) says what the MTP module adds to the LM head's stage, the
// JSON report counts its parameters apart, and a V-shaped schedule puts it with the head on device
// 0.
#include <doctest/doctest.h>

#include <string>

#include "schedules/builtin_generators.h"
#include "sim/report/html_report.h"
#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

std::string scenario(int depth, const char* schedules) {
  return "name: mtp\npipeline: {stages: 2, microbatches: 4}\n"
         "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000, mlp: swiglu,\n"
         "        bias: false, dropout: false, mtp_depth: " +
         std::to_string(depth) + "}\ncluster: {gpu: {preset: h800}}\nschedules: " + schedules +
         "\n";
}

struct Reports {
  nlohmann::json json;
  std::string text, markdown, html;
};

Reports run(const std::string& yaml) {
  static const Registry registry = builtin_registry();
  const Scenario sc = load_scenario_string(yaml, "mtp.yaml", ".", registry);
  const ScenarioRun result = run_scenario(sc, registry);
  return {scenario_report_json(sc, result), scenario_report_text(sc, result, ReportOptions{}),
          scenario_report_markdown(sc, result, ReportOptions{}),
          render_html_report(sc, result, std::vector<const MemoryTimeline*>(result.runs.size()))};
}

}  // namespace

TEST_CASE("mtp_depth: the last stage's costs show the module; the first stage's do not change") {
  const Reports plain = run(scenario(0, "[1f1b]"));
  const Reports mtp = run(scenario(1, "[1f1b]"));
  const nlohmann::json& costs = mtp.json["scenario"]["costs"];
  const nlohmann::json& before = plain.json["scenario"]["costs"];
  CHECK(costs["forward_s"][0] == before["forward_s"][0]);
  CHECK(costs["forward_s"][1].get<double>() > before["forward_s"][1].get<double>());
  CHECK(costs["static_memory_bytes"][1].get<double>() >
        before["static_memory_bytes"][1].get<double>());
  CHECK(mtp.text.find("stage 1 holds the multi-token prediction module") != std::string::npos);
  CHECK(plain.text.find("multi-token prediction") == std::string::npos);
  CHECK(mtp.markdown.find("stage 1 holds the multi-token prediction module") != std::string::npos);
  CHECK(plain.markdown.find("multi-token prediction") == std::string::npos);
  CHECK(mtp.html.find("<p>stage 1 holds the multi-token prediction module") != std::string::npos);
  CHECK(plain.html.find("multi-token prediction") == std::string::npos);
  const nlohmann::json& model = mtp.json["scenario"]["model"];
  CHECK(model["parameters"] == plain.json["scenario"]["model"]["parameters"]);
  CHECK(model["parameters_mtp"].get<double>() > 0);
  CHECK_FALSE(plain.json["scenario"]["model"].contains("parameters_mtp"));
  // Slower last stage, slower iteration.
  CHECK(mtp.json["results"][0]["simulation"]["iteration_time_s"].get<double>() >
        plain.json["results"][0]["simulation"]["iteration_time_s"].get<double>());
}

TEST_CASE("mtp_depth with ZB-V: the module runs with the head, in device 0's last chunk") {
  // ZB-V's V shape puts the last virtual stage (the head and the loss) on device 0: that device
  // gets slower with the MTP module, device 1 (the middle chunks) does not.
  auto busy = [](const Reports& r) {
    std::vector<double> out;
    for (const auto& d : r.json["results"][0]["simulation"]["busy_s_per_device"])
      out.push_back(d.get<double>());
    return out;
  };
  const Reports plain = run(scenario(0, "[zb-v]"));
  const Reports mtp = run(scenario(1, "[zb-v]"));
  REQUIRE(plain.json["results"][0]["status"] == "ok");
  const std::vector<double> a = busy(plain), b = busy(mtp);
  REQUIRE(a.size() == 2);
  CHECK(b[0] > a[0]);
  CHECK(b[1] == doctest::Approx(a[1]));
}
