// Text that fits the terminal and rows that do not repeat, on the bundled
// scenarios at COLUMNS=100: no line is longer, and no two consecutive rows of the memory,
// stage-cost or collective tables are the same apart from their device / stage number.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>
#include <vector>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The rows of the table whose heading line starts with `title` (up to the first line that is
/// blank or not indented like a row), each with its first number blanked out.
std::vector<std::string> table_rows(const std::vector<std::string>& lines,
                                    const std::string& title) {
  std::vector<std::string> rows;
  std::size_t i = 0;
  while (i < lines.size() && lines[i].rfind(title, 0) != 0) ++i;
  if (i + 1 >= lines.size() || lines[i + 1].rfind("---", 0) != 0) return rows;
  static const std::regex number(R"((\s)\d+(-\d+)?(\s))");
  for (i += 2; i < lines.size() && !lines[i].empty() && lines[i].find("zero for") != 0; ++i)
    rows.push_back(
        std::regex_replace(lines[i], number, "$1#$3", std::regex_constants::format_first_only));
  return rows;
}

}  // namespace

TEST_CASE("the bundled scenarios' text reports fit 100 columns") {
  for (const char* scenario :
       {"scenarios/quickstart.yaml", "scenarios/llama3-70b-h100.yaml",
        "scenarios/chimera_fast_network.yaml", "scenarios/chimera_slow_network.yaml",
        "scenarios/compare/six_schedules.yaml", "scenarios/calibration/gpt_h4096_h100.yaml",
        "scenarios/memory/offload_exposed.yaml", "scenarios/memory/offload_hidden.yaml",
        "scenarios/memory/oom.yaml", "scenarios/memory/pipeoffload_k.yaml",
        "scenarios/memory/recompute.yaml", "scenarios/optimizer/base.yaml",
        "scenarios/optimizer/offload.yaml", "scenarios/optimizer/topology.yaml",
        "scenarios/parallel/dp_overlap_off.yaml", "scenarios/parallel/dp_overlap_on.yaml",
        "scenarios/parallel/dp_ring.yaml", "scenarios/parallel/tp8_dgx.yaml",
        "scenarios/tabular/chimera_fast_network.yaml"}) {
    for (const char* command : {"run", "compare"}) {
      CAPTURE(scenario);
      CAPTURE(command);
      const Result r = run(std::string(command) + " " + scenario, "COLUMNS=100");
      CHECK(r.code != 2);
      CHECK(r.code != 3);
      CHECK_FALSE(r.out.empty());
      for (const std::string& line : lines_of(r.out)) {
        CAPTURE(line);
        CHECK(line.size() <= 100);
      }
    }
  }
}

TEST_CASE("Llama-3 70B: identical TP all-reduces, stage costs and memory rows collapse") {
  const Result r = run("run scenarios/llama3-70b-h100.yaml", "COLUMNS=100");
  REQUIRE(r.code == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  // Stages 1-5 send the same TP all-reduces (stage 0 also holds the embedding; with
  // layers_per_stage: balanced stage 6 holds one layer more and stage 7, beside the LM head,
  // fewer): one row for the run of equal stages.
  CHECK(r.out.find("tp all-reduce stage 1-5") != std::string::npos);
  CHECK(r.out.find("tp all-reduce stage 2 ") == std::string::npos);
  for (const char* title : {"memory ", "stage  T_F", "collective "}) {
    CAPTURE(title);
    const std::vector<std::string> rows = table_rows(lines, title);
    CHECK(rows.size() > 1);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      CAPTURE(rows[i]);
      CHECK(rows[i] != rows[i - 1]);
    }
  }
  // Something collapsed in each: a range of devices / stages.
  const std::regex range(R"(^\s*[a-z0-9-]*\s+\d+-\d+\s)");
  int memory_ranges = 0, cost_ranges = 0;
  bool in_memory = false, in_costs = false;
  for (const std::string& line : lines) {
    if (line.rfind("memory ", 0) == 0) in_memory = true;
    if (line.rfind("stage  T_F", 0) == 0) in_costs = true;
    if (line.empty()) in_memory = in_costs = false;
    if (in_memory && std::regex_search(line, range)) ++memory_ranges;
    if (in_costs && std::regex_search(line, std::regex(R"(^\d+-\d+\s)"))) ++cost_ranges;
  }
  CHECK(memory_ranges > 0);
  CHECK(cost_ranges > 0);
}

TEST_CASE("explain, list --presets, --help and error lines fit COLUMNS (100 and 60)") {
  for (const char* columns : {"100", "60"}) {
    const std::size_t width = std::stoul(columns);
    const std::string env = std::string("COLUMNS=") + columns;
    struct Case {
      std::string args;
      int code;
    };
    const std::vector<Case> cases = {
        {"explain zb-h1 tests/cli/explain_p4m8.yaml", 0},
        {"explain zb-h1", 0},
        {"list --presets", 0},
        {"list", 0},
        {"--help", 0},
        {"run --help", 0},
        {"regress --help", 0},
        {"sweep --help", 0},
        {"run tests/errors/several_errors.yaml", 2},
        {"run tests/errors/unknown_top_key.yaml", 2},
    };
    for (const Case& c : cases) {
      CAPTURE(columns);
      CAPTURE(c.args);
      const Result r = run(c.args, env);
      CHECK(r.code == c.code);
      const std::string& text = c.code == 0 ? r.out : r.err;
      CHECK_FALSE(text.empty());
      for (const std::string& line : lines_of(text)) {
        CAPTURE(line);
        CHECK(line.size() <= width);
      }
    }
  }
  // Piped without COLUMNS an error stays one line per diagnostic (what tools and CI read).
  const Result piped = run("run tests/errors/microbatches_huge.yaml");
  CHECK(piped.err.size() > 101);
  CHECK(piped.err.find('\n') == piped.err.size() - 1);
}
