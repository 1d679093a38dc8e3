// `bubblesim plan` as a library (sim/plan/plan.h) on a small job (tests/plan/small_plan.yaml): what
// it enumerates and rejects by rule, with the arithmetic; that its ranking is what running each
// layout's scenario alone gives; that it does not depend on the threads; the plan file's errors.
#include "sim/plan/plan.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "schedules/builtin_generators.h"
#include "sim/plan/plan_report.h"
#include "sim/report/throughput.h"
#include "sim/runner/resolve.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

const std::string kPlan = std::string(BUBBLESIM_SOURCE_DIR) + "/tests/plan/small_plan.yaml";

const Registry& registry() {
  static const Registry r = builtin_registry();
  return r;
}

PlanResult plan(std::int64_t replays, int jobs = 2, const std::string& file = kPlan) {
  PlanOptions options;
  options.jobs = jobs;
  options.replays = replays;
  options.per_family = 3;
  options.time_budget_s = 0;  // none: the result must not depend on the machine
  return run_plan(load_plan_file(file), registry(), options);
}

std::map<std::string, std::int64_t> by_family(const PlanResult& r) {
  std::map<std::string, std::int64_t> n;
  for (const PlanCandidate& c : r.candidates) ++n[c.family];
  return n;
}

std::string error_of(const std::string& text) {
  try {
    (void)run_plan(load_plan_string(text, "p.yaml", std::string(BUBBLESIM_SOURCE_DIR)), registry(),
                   PlanOptions{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("enumeration: the knobs' combinations, and what divisibility and memory reject") {
  const PlanResult r = plan(0);
  // tp x pp in {1, 2, 4}^2 on 8 GPUs: dp = 8 / (tp pp) is 8, 4, 2, 4, 2, 1, 2, 1 and none for
  // tp 4 pp 4. ZeRO applies where dp > 1 (6 layouts x 2 levels) and not where dp is 1 or none
  // (3 layouts): 15 families.
  const std::map<std::string, std::int64_t> families = by_family(r);
  CHECK(families.size() == 15);
  // Per family: 2 micro-batches x 2 recompute policies x (3 schedules with a pipeline, else
  // 1f1b alone): 4 for pp 1, 12 otherwise. 6 families of pp 1, 9 of pp > 1: 24 + 108 = 132.
  CHECK(families.at("tp1 pp1 dp8 zero0") == 4);
  CHECK(families.at("tp2 pp4 dp1") == 12);
  CHECK(r.candidates.size() == 132);
  std::int64_t divisibility = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (c.rejection != PlanRejection::Divisibility) continue;
    ++divisibility;
    CHECK(c.family == "tp4 pp4 (no dp)");
    CHECK(c.reason == "8 GPUs are not a multiple of tp x pp x cp = 16");
  }
  CHECK(divisibility == 12);
  // The static-memory bound: the model's parameters over tp x pp at 18 bytes each at ZeRO 0
  // (2 weights + 4 gradients + 12 Adam) and 2 + 4 + 12 / dp at ZeRO 1.
  const Scenario sc = load_scenario_string(
      "name: m\nmodel: {layers: 16, hidden: 2048, heads: 16, seq_len: 2048, vocab: "
      "32000}\ncluster: {gpu: {preset: h100-sxm}}\npipeline: {stages: 1, "
      "microbatches: 1}\nschedules: [1f1b]\n",
      "m.yaml", registry());
  const double parameters = resolve(sc).model_costs->parameters;
  const double zero0 = parameters * 18.0 / (1 << 30),
               zero1 = parameters * (6.0 + 12.0 / 8) / (1 << 30);
  REQUIRE(zero0 > 12.0);  // over the plan's 12 GiB budget before any activation
  REQUIRE(zero1 < 12.0);
  const auto rejected =
      std::find_if(r.rejected_families.begin(), r.rejected_families.end(),
                   [](const PlanRejectedFamily& f) { return f.family == "tp1 pp1 dp8 zero0"; });
  REQUIRE(rejected != r.rejected_families.end());
  CHECK(rejected->rejection == PlanRejection::Memory);
  CHECK(rejected->reason.find(fmt::format("static memory at least {:.1f} GiB per GPU", zero0)) !=
        std::string::npos);
  CHECK(by_family(r).count("tp1 pp1 dp8 zero1") == 1);
  for (const PlanCandidate& c : r.candidates) {
    if (c.family == "tp1 pp1 dp8 zero1") CHECK(c.rejection != PlanRejection::Divisibility);
  }
  // Without replays nothing is ranked, and the best estimates are listed instead.
  CHECK(r.ranked.empty());
  CHECK(r.estimated_only.size() == 10);
}

TEST_CASE("the ranking is what running each layout's scenario alone gives") {
  const PlanResult r = plan(10);
  REQUIRE(r.ranked.size() >= 8);
  std::vector<std::pair<double, std::string>> alone;
  for (std::size_t i : r.ranked) {
    const PlanCandidate& c = r.candidates[i];
    CAPTURE(c.label);
    const Scenario sc =
        load_scenario_string(c.scenario_yaml, "alone.yaml",
                             std::string(BUBBLESIM_SOURCE_DIR) + "/tests/plan", registry());
    REQUIRE(sc.schedules.size() == 1);
    const ScenarioRun run = run_scenario(sc, registry());
    REQUIRE(run.runs.size() == 1);
    const Metrics& m = run.runs[0].simulation.metrics;
    const double t = m.iteration.iteration_time.seconds();
    CHECK(t == c.replay->iteration_s);
    CHECK(throughput(sc, t).tokens_per_s_per_gpu == c.replay->tokens_per_s_per_gpu);
    // The layout the label names is the one the scenario runs.
    CHECK(sc.parallelism.tp == c.degrees.tp);
    CHECK(sc.stages == c.degrees.pp);
    CHECK(sc.parallelism.dp == c.degrees.dp);
    alone.emplace_back(t, c.label);
  }
  std::vector<std::pair<double, std::string>> sorted = alone;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == alone);  // the plan's order is the order of the runs alone
  // The iteration split sums to the iteration time, and the reasons say by how much each beats
  // the next.
  for (std::size_t i : r.ranked) {
    const PlanReplay& p = *r.candidates[i].replay;
    CHECK(p.compute_s + p.bubble_s + p.imbalance_s + p.exposed_comm_s() ==
          doctest::Approx(p.iteration_s).epsilon(1e-9));
  }
  const std::vector<std::string> reasons = plan_reasons(r);
  REQUIRE(reasons.size() == r.ranked.size() - 1);
  CHECK(reasons[0].rfind("#1 beats #2 by ", 0) == 0);
}

TEST_CASE("the estimate tracks the replays it chose") {
  // A guard on the mechanism, not a tuned number: the estimate is the idealized replay plus the
  // closed forms of what follows it, so it is within a few percent of the replay here (0.7% at
  // most when written) and orders the layouts almost as the replay does.
  const PlanResult r = plan(10);
  CHECK(r.agreement.samples == static_cast<std::int64_t>(r.ranked.size()));
  CHECK(r.agreement.median_abs_error < 0.02);
  CHECK(r.agreement.max_abs_error < 0.05);
  CHECK(r.agreement.rank_correlation > 0.8);
}

TEST_CASE("the result does not depend on the threads") {
  auto without_run = [](nlohmann::json j) {
    j.erase("run");
    return j.dump();
  };
  const PlanResult one = plan(6, 1), two = plan(6, 2);
  CHECK(without_run(plan_report_json(one)) == without_run(plan_report_json(two)));
  CHECK(plan_report_text(one, 100) == plan_report_text(two, 100));
  CHECK(plan_report_csv(one) == plan_report_csv(two));
  CHECK(plan_report_html(one) == plan_report_html(two));
}

TEST_CASE("a knob the base fixes, and the plan's constraints") {
  const std::string text =
      "model: {layers: 16, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000}\n"
      "cluster: {gpu: {preset: h100-sxm}}\n"
      "topology: {builder: multi-node, nodes: 2, gpus_per_node: 4}\n"
      "training: {global_batch: 32}\n"
      "parallelism: {tp: 2}\n"
      "search: {pp: [1, 2, 4], zero: [1], micro_batch_size: [1], recompute: [none],\n"
      "         schedules: [1f1b], constraints: ['pp * dp == 4']}\n";
  PlanOptions options;
  options.replays = 0;
  options.time_budget_s = 0;
  const PlanResult r =
      run_plan(load_plan_string(text, "p.yaml", BUBBLESIM_SOURCE_DIR), registry(), options);
  // tp 2 leaves 4 GPUs per pipeline: pp x dp == 4 holds for pp 1, 2, 4. A constraint that holds
  // for pp 2 only leaves the other two out.
  CHECK(r.candidates.size() == 3);
  for (const PlanCandidate& c : r.candidates) CHECK(c.degrees.tp == 2);
  const PlanResult narrow =
      run_plan(load_plan_string(text.substr(0, text.find("'pp * dp == 4'")) + "'pp == 2']}\n",
                                "p.yaml", BUBBLESIM_SOURCE_DIR),
               registry(), options);
  CHECK(narrow.candidates.size() == 1);
  CHECK(narrow.excluded_by_constraints == 2);
}

TEST_CASE("plan file errors name the key and the line") {
  const std::string base =
      "model: {layers: 16, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000}\n"
      "cluster: {gpu: {preset: h100-sxm}}\n"
      "topology: {builder: multi-node, nodes: 2, gpus_per_node: 4}\n"
      "training: {global_batch: 32}\n";
  CHECK(error_of(base + "parallelism: {dp: 4}\n").find("p.yaml:5:") != std::string::npos);
  CHECK(error_of(base + "parallelism: {dp: 4}\n").find("the plan derives dp from the GPU count") !=
        std::string::npos);
  CHECK(error_of(base + "parallelism: {tp: 2}\nsearch: {tp: [1, 2]}\n")
            .find("the plan searches parallelism.tp (search.tp at line 6)") != std::string::npos);
  CHECK(error_of(base + "search: {tensor: [1, 2]}\n").find("unknown key 'tensor'") !=
        std::string::npos);
  CHECK(error_of(base + "search: {tp: [1, x]}\n")
            .find("p.yaml:5:14: error: search.tp: 'x' is not a whole number from 1 to 1048576") !=
        std::string::npos);
  CHECK(error_of(base + "search: {bucket: [25MB, big]}\n").find("'big' is not a size") !=
        std::string::npos);
  CHECK(error_of(base + "search: {constraints: ['layers > 2']}\n")
            .find("'layers' is not one of tp, pp, dp, cp, ep, zero, micro_batch_size") !=
        std::string::npos);
  CHECK(error_of("model: {preset: llama3-8b, seq_len: 2048}\ncluster: {gpu: {preset: h100-sxm}}\n"
                 "topology: {builder: multi-node, nodes: 2}\n")
            .find("a plan needs 'training'") != std::string::npos);
  // A base key the scenario refuses is located in the plan file.
  CHECK(error_of(base + "memory: {budgett: 10GiB}\n").find("p.yaml:5:10: error: memory.budgett") !=
        std::string::npos);
}

TEST_CASE("a time budget that runs out is said, not hidden") {
  PlanOptions options;
  options.replays = 4;
  options.time_budget_s = 1e-9;
  const PlanResult r = run_plan(load_plan_file(kPlan), registry(), options);
  CHECK(r.ranked.empty());
  CHECK(r.time_budget_note.find("the time budget ran out after estimating 0 of") !=
        std::string::npos);
  CHECK(std::all_of(r.candidates.begin(), r.candidates.end(), [](const PlanCandidate& c) {
    return c.rejection == PlanRejection::Divisibility || c.rejection == PlanRejection::Memory ||
           c.rejection == PlanRejection::NotEvaluated;
  }));
  CHECK(plan_report_text(r, 100).find("time budget: the time budget ran out") != std::string::npos);
}
