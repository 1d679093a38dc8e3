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
      CHECK(note.find("optimized by heuristic") != std::string::npos);
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
  CHECK(a.out.find("optimized(offload=true,recompute=true,method=heuristic)") != std::string::npos);
  CHECK(a.out.find("] optimized by heuristic") != std::string::npos);
}
