// The optimizer through the CLI: scenarios/optimizer/offload.yaml (PipeOffload's k just under 1,
// budget p M_B) gives a schedule that offloads and has at most half of 1F1B's bubble, never goes
// out of memory, explains its decisions in the report, and the text report is byte-identical
// between runs (the solve time is only in the JSON `run` object).

#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

TEST_CASE("optimized with offload: half of 1F1B's bubble at p M_B, decisions in the report") {
  Result r = run("run scenarios/optimizer/offload.yaml --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  double bubble_1f1b = -1, bubble_offload = -1;
  for (const auto& result : j.at("results")) {
    CHECK(result.at("simulation").at("out_of_memory").empty());
    const std::string label = result.at("label");
    if (label == "1f1b") bubble_1f1b = result.at("simulation").at("bubble_ratio_span");
    if (label.find("offload=true") != std::string::npos) {
      bubble_offload = result.at("simulation").at("bubble_ratio_span");
      const std::string note = result.at("formula").at("note");
      CHECK(note.find("optimized by search") != std::string::npos);
      CHECK(note.find("activations offloaded") != std::string::npos);
      CHECK(result.at("run").at("generate_s").get<double>() > 0.0);
      CHECK(result.at("simulation").at("offloaded_bytes").get<double>() > 0.0);
    }
  }
  REQUIRE(bubble_1f1b > 0);
  REQUIRE(bubble_offload >= 0);
  CHECK(bubble_offload <= bubble_1f1b / 2);
}

TEST_CASE("optimized: the text report is byte-identical between runs") {
  Result a = run("run scenarios/optimizer/offload.yaml --schedule optimized");
  Result b = run("run scenarios/optimizer/offload.yaml --schedule optimized");
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  // The optimizer's note is a footnote of the formula table.
  CHECK(a.out.find("optimized(offload=true,recompute=true,budget_evals=20000,method=heuristic)") !=
        std::string::npos);
  CHECK(a.out.find("] optimized by search") != std::string::npos);
}

TEST_CASE("optimized honours each device's budget: never over device 1's 40 GiB") {
  // Exit 1: the third entry, planned with 80 GiB everywhere, runs out of memory on device 1.
  Result r = run("run tests/cli/optimizer_budgets.yaml --format json");
  REQUIRE(r.code == 1);
  const auto j = nlohmann::json::parse(r.out);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  int checked = 0;
  for (const auto& result : j.at("results")) {
    const std::string label = result.at("label");
    CAPTURE(label);
    const auto& sim = result.at("simulation");
    if (label.find("budget=80GiB") != std::string::npos) {
      // The contrast: a plan made with the first device's budget for every device.
      REQUIRE(sim.at("out_of_memory").size() == 1);
      CHECK(sim.at("out_of_memory")[0].at("device") == 1);
      continue;
    }
    CHECK(sim.at("out_of_memory").empty());
    const auto& peak = sim.at("peak_memory_bytes_per_device");
    CHECK(peak[1].get<double>() <= 40 * gib);
    CHECK(peak[0].get<double>() <= 80 * gib);
    const std::string note = result.at("formula").at("note");
    CHECK(note.find("activation limit [7, 3, 7, 7] M_B per device") != std::string::npos);
    ++checked;
  }
  CHECK(checked == 2);  // straight and V placement
}

TEST_CASE("objective: iteration plans the engine's iteration time under the scenario's barrier") {
  // tests/cli/optimizer_iteration.yaml: the same search budget with the stage-span objective and
  // with the iteration objective; optimizer steps 1, 1, 1, 6 ms.
  for (const std::string barrier : {"none", "global"}) {
    CAPTURE(barrier);
    std::string text = slurp(source("tests/cli/optimizer_iteration.yaml"));
    const std::string from = "barrier: none";
    text.replace(text.find(from), from.size(), "barrier: " + barrier);
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / (fmt_name() + ".yaml");
    std::ofstream(file) << text;
    Result r = run("run '" + file.string() + "' --format json");
    std::filesystem::remove(file);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("results").size() == 2);
    const auto& span_run = j["results"][0];
    const auto& iteration_run = j["results"][1];
    const double span_objective = span_run["simulation"]["iteration_time_s"];
    const double iteration_objective = iteration_run["simulation"]["iteration_time_s"];
    const std::string note = iteration_run["formula"]["note"];
    // The plan's estimate is the engine's number (two iterations, fixed delay).
    const std::size_t estimate = note.find("the plan's own estimate of the iteration time");
    REQUIRE(estimate != std::string::npos);
    CHECK(note.find("(+0%)", estimate) != std::string::npos);
    CHECK(note.find("predicted iteration") != std::string::npos);
    if (barrier == "none") {
      // Without a barrier the step overlaps the next iteration: worth planning for.
      CHECK(iteration_objective < span_objective - 1e-4);
    } else {
      CHECK(iteration_objective <= span_objective + 1e-12);
    }
  }
}

TEST_CASE("optimized under a topology: transfer times from the routes, the estimate in the note") {
  // scenarios/optimizer/topology.yaml: 4 GPUs, NVLink within a pair and PCIe across, slow links.
  Result r = run("run scenarios/optimizer/topology.yaml --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  double zb_h1 = -1;
  int optimized = 0;
  for (const auto& result : j.at("results")) {
    const std::string label = result.at("label");
    CAPTURE(label);
    const double bubble = result["simulation"]["bubble_ratio_span"];
    if (label == "zb-h1") zb_h1 = bubble;
    if (label.rfind("optimized", 0) != 0) continue;
    ++optimized;
    REQUIRE(zb_h1 > 0);
    CHECK(bubble < zb_h1);
    // A straight pipeline's transfers never share a link here: the plan's own estimate is exact.
    const std::string note = result["formula"]["note"];
    const std::size_t estimate = note.find("the plan's own estimate of the stage span");
    REQUIRE(estimate != std::string::npos);
    CHECK(note.find("(+0%)", estimate) != std::string::npos);
  }
  CHECK(optimized == 2);
}

TEST_CASE("optimized with offload and recompute: p = 4, m = 8 proven optimal") {
  // tests/cli/optimizer_proof.yaml: 2 M_B per device, half of 1F1B's memory. The proof status is
  // in the JSON note; the engine replays the plan at its predicted 30 ms within the budget.
  Result r = run("run tests/cli/optimizer_proof.yaml --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.at("results").size() == 1);
  const auto& result = j.at("results").at(0);
  const std::string note = result.at("formula").at("note");
  CHECK(note.find("(optimal, straight placement)") != std::string::npos);
  CHECK(note.find("predicted stage-span 30 ms, certified lower bound 30 ms, gap 0%") !=
        std::string::npos);
  CHECK(note.find("the replay's 30 ms (+0%)") != std::string::npos);
  CHECK(result.at("simulation").at("out_of_memory").empty());
  CHECK(result.at("simulation").at("peak_activation_bytes").get<double>() <= 2e9);
  CHECK(result.at("simulation").at("offloaded_bytes").get<double>() > 0.0);
}

TEST_CASE("optimized under sequence parallelism: the replay stays within the plan's budget") {
  // M_W > M_B under SP. The planner took M_W <= M_B (the replay peaked at 97.3
  // GiB of 80 on device 3); it now plans with the replay's memory rules
  // (schedules/activation_memory.h), so the plan fits or is refused, and its facts quote M_W as
  // the stage table has it.
  Result r = run("run tests/cli/optimizer_sp_budget.yaml --format json");
  CAPTURE(r.err);
  const auto j = nlohmann::json::parse(r.out);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  REQUIRE(j.at("results").size() == 1);
  const auto& result = j.at("results")[0];
  const auto& sim = result.at("simulation");
  CHECK(r.code == 0);
  CHECK(sim.at("out_of_memory").empty());
  REQUIRE(sim.at("peak_memory_bytes_per_device").size() == 4);
  for (const auto& peak : sim.at("peak_memory_bytes_per_device"))
    CHECK(peak.get<double>() <= 80 * gib);
}
