// Variability through the runner and the reports: cv 0 gives the deterministic metrics exactly,
// the reports are byte-identical for 1 and 2 threads, the metrics carry mean, sd, p50 and p95,
// and `regress` widens its margin by the sampling error.
#include <doctest/doctest.h>

#include <cmath>

#include "schedules/builtin_generators.h"
#include "sim/report/json_report.h"
#include "sim/report/regression.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"

using namespace bubblesim;

namespace {

const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

// The quickstart's 1.5B costs on 4 stages (small enough for many samples in a test).
std::string scenario_yaml(const std::string& variability) {
  return "name: noise\npipeline: {stages: 4, microbatches: 12}\n"
         "costs: {forward: 18.522ms, backward_input: 18.086ms, backward_weight: 9.337ms,\n"
         "        activation_memory: 1GiB, weight_grad_memory: 0.5GiB}\n"
         "communication: {model: fixed-delay, delay: 0.601ms}\n"
         "faults: {stragglers: [{device: 2, slowdown: 1.1}]}\n"
         "schedules: [gpipe, 1f1b, zb-h1, zb-h2, interleaved-1f1b]\n" +
         variability;
}

/// A scenario and its run (the run refers to the scenario, so they live together).
struct Run {
  Scenario scenario;
  ScenarioRun result;
};
Run run(const std::string& variability, int threads = 0) {
  Run r{load_scenario_string(scenario_yaml(variability), "noise.yaml", registry()), {}};
  r.scenario.command_line.threads = threads;
  r.result = run_scenario(r.scenario, registry());
  return r;
}

nlohmann::json report(const std::string& variability, int threads) {
  const Run r = run(variability, threads);
  nlohmann::json j = scenario_report_json(r.scenario, r.result);
  // Wall-clock times are the only nondeterministic fields of a report.
  j.erase("run");
  for (nlohmann::json& x : j["results"]) x.erase("run");
  return j;
}

}  // namespace

TEST_CASE("cv 0: the simulation metrics and the median timeline are the deterministic ones") {
  const Run plain_run = run(""), noiseless_run = run("variability: {cv: 0, samples: 7}\n");
  const ScenarioRun& plain = plain_run.result;
  const ScenarioRun& noiseless = noiseless_run.result;
  REQUIRE(plain.runs.size() == noiseless.runs.size());
  const nlohmann::json a = scenario_report_json(plain_run.scenario, plain);
  const nlohmann::json b = scenario_report_json(noiseless_run.scenario, noiseless);
  for (std::size_t i = 0; i < plain.runs.size(); ++i) {
    CAPTURE(plain.runs[i].label);
    const auto& x = plain.runs[i].simulation;
    const auto& y = noiseless.runs[i].simulation;
    CHECK(x.metrics.makespan == y.metrics.makespan);
    CHECK(x.metrics.bubble_ratio == y.metrics.bubble_ratio);
    for (std::size_t d = 0; d < x.timings.size(); ++d) {
      for (std::size_t k = 0; k < x.timings[d].size(); ++k) {
        CHECK(x.timings[d][k].start == y.timings[d][k].start);
        CHECK(x.timings[d][k].end == y.timings[d][k].end);
      }
    }
    // Every metric of the deterministic report has the same value with cv 0.
    for (const auto& [level, values] : a["results"][i].items()) {
      if (level != "simulation" && level != "table" && level != "formula") continue;
      if (!values.is_object()) continue;
      for (const auto& [key, value] : values.items()) {
        CAPTURE(key);
        if (value.is_null()) continue;  // the variability metrics: none without it
        CHECK(b["results"][i][level][key] == value);
      }
    }
    CHECK(b["results"][i]["simulation"]["makespan_sd_s"] == 0.0);
    CHECK(a["results"][i]["simulation"]["makespan_sd_s"].is_null());
    CHECK(b["results"][i]["fault_free"] == a["results"][i]["fault_free"]);
  }
}

TEST_CASE("the same seed and N give byte-identical reports at 1 and 2 threads") {
  const std::string v =
      "variability: {cv: {F: 0.05, B: 0.05, W: 0.08, transfers: 0.3}, "
      "correlation: {within_device: 0.3, across_devices: 0.1}, samples: 60}\n";
  const nlohmann::json one = report(v, 1), two = report(v, 2);
  CHECK(one.dump() == two.dump());
  const Run text1 = run(v, 1), text2 = run(v, 2);
  CHECK(scenario_report_text(text1.scenario, text1.result) ==
        scenario_report_text(text2.scenario, text2.result));
  CHECK(one["results"][1]["simulation"]["samples"] == 60);
}

TEST_CASE("the simulation level gives mean, sd, p50 and p95; the means exceed the noiseless") {
  const nlohmann::json j = report("variability: {cv: 0.05, samples: 200, seed: 11}\n", 0);
  for (const nlohmann::json& r : j["results"]) {
    CAPTURE(r["label"].get<std::string>());
    const nlohmann::json& s = r["simulation"];
    // Jensen: the makespan is a max of sums of durations (convex), so its mean is at least the
    // noiseless one, up to the sampling error of the estimate.
    const double se = s["makespan_sd_s"].get<double>() / std::sqrt(200.0);
    CHECK(s["makespan_s"].get<double>() > s["noiseless_makespan_s"].get<double>() - 3.0 * se);
    CHECK(s["makespan_sd_s"].get<double>() > 0.0);
    CHECK(s["makespan_p95_s"].get<double>() >= s["makespan_p50_s"].get<double>());
    CHECK(s["bubble_ratio_p95"].get<double>() >= s["bubble_ratio_p50"].get<double>());
    CHECK(s["bubble_ratio_sd"].get<double>() > 0.0);
  }
}

TEST_CASE("regress: a different seed is within the sampling error, a real slowdown is not") {
  const nlohmann::json base = report("variability: {cv: 0.05, samples: 100, seed: 1}\n", 0);
  const nlohmann::json reseeded = report("variability: {cv: 0.05, samples: 100, seed: 2}\n", 0);
  // With a zero tolerance only the sampling error separates the two seeds' means (every metric
  // judged: `all`).
  const RegressionReport same = compare_reports(base, reseeded, 0.0, "base", "reseeded", {}, true);
  CHECK_FALSE(same.regressed());
  bool judged = false;
  for (const MetricComparison& m : same.metrics) {
    if (m.metric == "simulation.makespan_s") {
      CHECK(m.sampling_error > 0.0);
      CHECK(m.current != m.baseline);
      judged = true;
    }
  }
  CHECK(judged);
  // 0.5 % slower on every mean and quantile: far beyond 3 standard errors of 100 samples.
  nlohmann::json slower = reseeded;
  for (nlohmann::json& r : slower["results"]) {
    for (const char* key : {"makespan_s", "makespan_p50_s", "makespan_p95_s"})
      r["simulation"][key] = r["simulation"][key].get<double>() * 1.005;
  }
  const RegressionReport worse = compare_reports(base, slower, 0.0, "base", "slower", {}, true);
  CHECK(worse.regressed());
  CHECK(regression_markdown(worse).find("sampling error") != std::string::npos);
}
