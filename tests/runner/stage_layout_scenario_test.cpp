// Stage layouts a model can be built with (docs/models.md "Stage layout"): a chunk count whose
// virtual stages cannot hold whole layers (the embedding on the first, the LM head and loss on
// the last) is refused, naming the key, the value and the counts that split, unless the split is
// stated; `layers_per_chunk` written for another count is refused; `layers_per_stage: balanced`
// evens the stages' costs, and the verdict warns when stages differ by more than 10%.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/diagnostics.h"
#include "tests/runner/scenario_run_support.h"

using namespace bubblesim;
using bubblesim::scenario_test::registry;

namespace {

/// An 80-layer Llama-like model on p stages (80 layers on p = 4 once gave stages of unequal work
/// silently).
std::string llama(int p, int m, const std::string& model_extra, const std::string& schedules) {
  return "name: layout\npipeline: {stages: " + std::to_string(p) +
         ", microbatches: " + std::to_string(m) +
         "}\nmodel: {layers: 80, hidden: 1024, heads: 16, seq_len: 1024, vocab: 128256, mlp: "
         "swiglu, bias: false, dropout: false" +
         model_extra + "}\ncluster: {gpu: {preset: h100-sxm}}\nschedules: " + schedules + "\n";
}

/// The first error loading or running `yaml` ("" when it runs).
std::string refusal(const std::string& yaml) {
  try {
    const Scenario sc = load_scenario_string(yaml, "layout.yaml", ".", registry());
    run_scenario(sc, registry());
  } catch (const InputError& e) {
    return e.diagnostics().front().render();
  }
  return "";
}

double fbw(const StageCost& c) {
  return (c.forward + c.backward_input + c.backward_weight).seconds();
}

}  // namespace

TEST_CASE("a chunk count that does not divide the layers is refused, naming it") {
  for (int chunks : {3, 6}) {
    CAPTURE(chunks);
    const std::string e = refusal(llama(
        4, 8, "", "[{name: interleaved-1f1b, params: {chunks: " + std::to_string(chunks) + "}}]"));
    CHECK(e.find("layout.yaml:") == 0);
    CHECK(e.find("interleaved-1f1b params.chunks: " + std::to_string(chunks)) != std::string::npos);
    CHECK(e.find(std::to_string(4 * chunks) + " virtual stages") != std::string::npos);
    CHECK(e.find("80 layers do not divide") != std::string::npos);
    CHECK(e.find("Chunk counts that split: 2, 4, 5, 10") != std::string::npos);
    CHECK(e.find("model.layers_per_chunk") != std::string::npos);
  }
  // The counts that divide run, each with the embedding on the first virtual stage and the LM
  // head on the last (their own costs, not the stage's divided).
  const Scenario sc =
      load_scenario_string(llama(4, 8, "", "[{name: interleaved-1f1b, params: {chunks: 4}}]"),
                           "l.yaml", ".", registry());
  const ScenarioRun run = run_scenario(sc, registry());
  REQUIRE(run.runs.size() == 1);
  const std::vector<StageCost>& costs = run.runs[0].stage_costs;
  REQUIRE(costs.size() == 16);
  CHECK(fbw(costs.back()) > fbw(costs[7]));  // the head's chunk is the longest
  CHECK(fbw(costs[12]) == doctest::Approx(fbw(costs[7])));
}

TEST_CASE("an uneven chunk split stated with layers_per_chunk runs; balanced places it") {
  std::string counts = "[0";
  for (int i = 1; i < 11; ++i) counts += i <= 8 ? ", 7" : ", 8";
  counts += ", 0]";  // 8 x 7 + 2 x 8 = 72: short of 80
  CHECK(refusal(llama(4, 8, ", layers_per_chunk: " + counts,
                      "[{name: interleaved-1f1b, params: {chunks: 3}}]"))
            .find("layers_per_chunk sums to 72") != std::string::npos);
  counts = "[6, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 7]";  // 80
  const Scenario stated =
      load_scenario_string(llama(4, 8, ", layers_per_chunk: " + counts,
                                 "[{name: interleaved-1f1b, params: {chunks: 3}}]"),
                           "l.yaml", ".", registry());
  CHECK(run_scenario(stated, registry()).runs.size() == 1);
  const Scenario balanced =
      load_scenario_string(llama(4, 8, ", layers_per_stage: balanced",
                                 "[{name: interleaved-1f1b, params: {chunks: 3}}, zb-v]"),
                           "l.yaml", ".", registry());
  const ScenarioRun run = run_scenario(balanced, registry());
  REQUIRE(run.runs.size() == 2);
  const std::vector<StageBreakdown>& chunks = run.resolved.model_costs->chunked.at(3);
  std::int64_t layers = 0;
  for (const StageBreakdown& c : chunks) layers += c.layers;
  CHECK(layers == 80);
  CHECK(chunks.front().embedding);
  CHECK(chunks.back().lm_head);
}

TEST_CASE("layers_per_chunk written for another chunk count is an error naming it") {
  const std::string counts = "[10, 10, 10, 10, 10, 10, 10, 10]";  // p = 4, v = 2
  const std::string e = refusal(llama(4, 8, ", layers_per_chunk: " + counts,
                                      "[{name: interleaved-1f1b, params: {chunks: 4}}]"));
  CHECK(e.find("model.layers_per_chunk has 8 counts, written for 2 chunks per device") !=
        std::string::npos);
  CHECK(e.find("params.chunks: 4") != std::string::npos);
  // Its own count runs.
  const Scenario sc = load_scenario_string(
      llama(4, 8, ", layers_per_chunk: " + counts, "[{name: interleaved-1f1b}]"), "l.yaml", ".",
      registry());
  CHECK(run_scenario(sc, registry()).runs.size() == 1);
}

TEST_CASE(
    "refuse what cannot be built: every generator x shapes runs with the model's own chunk "
    "costs or is refused naming the key") {
  // Every built-in generator with its defaults, and the chunk counts of those that take one, on
  // layer counts that divide some virtual-stage counts and not others.
  int refused = 0, chunked = 0;
  for (int layers : {12, 13, 16}) {
    for (int p : {2, 3, 4}) {
      for (const std::string& name : registry().names()) {
        if (name == "from-file" || name == "optimized") continue;  // a file; a solver (below)
        std::vector<std::string> entries{name};
        if (name == "interleaved-1f1b" || name == "looped-bfs") {
          for (int v : {2, 3, 5}) {
            entries.push_back("{name: " + name + ", params: {chunks: " + std::to_string(v) + "}}");
          }
        }
        for (const std::string& entry : entries) {
          CAPTURE(layers);
          CAPTURE(p);
          CAPTURE(entry);
          const std::string yaml =
              "name: reg\npipeline: {stages: " + std::to_string(p) +
              ", microbatches: 12}\nmodel: {layers: " + std::to_string(layers) +
              ", hidden: 256, heads: 4, seq_len: 128, vocab: 32000}\ncluster: {gpu: {preset: "
              "h100-sxm}}\nschedules: [" +
              entry + "]\n";
          const Scenario sc = load_scenario_string(yaml, "reg.yaml", ".", registry());
          try {
            const ScenarioRun run = run_scenario(sc, registry());
            for (const ScheduleRun& r : run.runs) {
              if (r.table.chunks <= 1) continue;
              ++chunked;
              // The model's own chunk layout: never a stage's costs divided among its chunks.
              const auto it = run.resolved.costs.chunked.find(r.table.chunks);
              REQUIRE(it != run.resolved.costs.chunked.end());
              REQUIRE(r.stage_costs.size() == it->second.size());
              for (std::size_t s = 0; s < it->second.size(); ++s)
                CHECK(r.stage_costs[s].forward == it->second[s].forward);
              const auto& parts = run.resolved.model_costs->chunked.at(r.table.chunks);
              CHECK(parts.front().embedding);
              CHECK(parts.back().lm_head);
            }
          } catch (const InputError& e) {
            const std::string what = e.diagnostics().front().render();
            if (what.find("virtual stages on") == std::string::npos) continue;  // other refusals
            ++refused;
            CHECK(what.find("Chunk counts that split") != std::string::npos);
            CHECK(what.find(std::to_string(layers) + " layers do not divide") != std::string::npos);
          }
        }
      }
    }
  }
  CHECK(refused > 10);
  CHECK(chunked > 10);
}

TEST_CASE(
    "layers_per_stage: balanced brings DeepSeek-V3 at PP 16 within 10% of the "
    "mean; without it the verdict warns") {
  auto yaml = [](const std::string& extra) {
    return "name: dsv3\npipeline: {stages: 16, microbatches: 16}\nmodel: {preset: deepseek-v3, "
           "micro_batch_size: 1" +
           extra +
           "}\ncluster: {gpu: {preset: h800}}\nmemory: {budget: 10TiB}\nschedules: [1f1b]\n";
  };
  auto spread = [](const ScenarioRun& run) {
    double sum = 0, most = 0;
    for (const StageCost& c : run.resolved.costs.stages) {
      sum += fbw(c);
      most = std::max(most, fbw(c));
    }
    return most / (sum / static_cast<double>(run.resolved.costs.stages.size()));
  };
  const Scenario plain = load_scenario_string(yaml(""), "d.yaml", ".", registry());
  const ScenarioRun plain_run = run_scenario(plain, registry());
  const Scenario even =
      load_scenario_string(yaml(", layers_per_stage: balanced"), "d.yaml", ".", registry());
  const ScenarioRun even_run = run_scenario(even, registry());
  MESSAGE("largest stage over the mean: default ", spread(plain_run), ", balanced ",
          spread(even_run));
  CHECK(spread(plain_run) > 1.10);
  CHECK(spread(even_run) <= 1.10);
  std::int64_t layers = 0;
  for (const StageBreakdown& s : even_run.resolved.model_costs->stages) layers += s.layers;
  CHECK(layers == 61);

  const std::string warned = scenario_report_text(plain, plain_run, ReportOptions{});
  CHECK(warned.find("warning: stage imbalance: stage 15") != std::string::npos);
  const nlohmann::json warnings = scenario_report_json(plain, plain_run)["warnings"];
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].get<std::string>().find("model.layers_per_stage: balanced") !=
        std::string::npos);
  const std::string quiet = scenario_report_text(even, even_run, ReportOptions{});
  CHECK(quiet.find("stage imbalance") == std::string::npos);
  CHECK(scenario_report_json(even, even_run)["scenario"]["model"]["layers_per_stage"] ==
        "balanced");
  CHECK(even_run.runs.front().simulation.metrics.makespan <
        plain_run.runs.front().simulation.metrics.makespan);
}

TEST_CASE("layers_per_stage: balanced on uniform stages gives Megatron's even split") {
  // No vocabulary: every stage is layers only, so balanced splits 80 layers as 20 each.
  const Scenario sc = load_scenario_string(
      "name: u\npipeline: {stages: 4, microbatches: 8}\nmodel: {layers: 80, hidden: 1024, heads: "
      "16, seq_len: 1024, layers_per_stage: balanced}\ncluster: {gpu: {preset: h100-sxm}}\n"
      "schedules: [1f1b]\n",
      "u.yaml", ".", registry());
  const ScenarioRun run = run_scenario(sc, registry());
  for (const StageBreakdown& s : run.resolved.model_costs->stages) CHECK(s.layers == 20);
}

TEST_CASE("layers_per_stage with Megatron-Core's keys places the stages as Megatron-Core does") {
  // --decoder-first/last-pipeline-num-layers 18: the other 44 layers over 2 stages, 22 each.
  const Scenario sc =
      load_scenario_string(llama(4, 8, ", layers_per_stage: {first: 18, last: 18}", "[1f1b]"),
                           "l.yaml", ".", registry());
  const ScenarioRun run = run_scenario(sc, registry());
  std::vector<std::int64_t> layers;
  for (const StageBreakdown& s : run.resolved.model_costs->stages) layers.push_back(s.layers);
  CHECK(layers == std::vector<std::int64_t>{18, 22, 22, 18});
  // The embedding and the loss each counted as a layer: 82 units do not divide over 4 stages.
  const std::string refused = refusal(
      llama(4, 8, ", layers_per_stage: {embedding_as_layer: true, loss_as_layer: true}", "[1f1b]"));
  CHECK(refused.find("80 layers + 2 must divide evenly over 4 stages") != std::string::npos);
  // Both forms together, or neither key, are refused at the key.
  CHECK(refusal(llama(4, 8, ", layers_per_stage: {first: 18, loss_as_layer: true}", "[1f1b]"))
            .find("not both") != std::string::npos);
  CHECK(refusal(llama(4, 8, ", layers_per_stage: {}", "[1f1b]")).find("expected first, last") !=
        std::string::npos);
}
