// Outputs a person reads: the verdict first, text within 100 columns, infeasible as an
// outcome, a regression gate without false alarms, and commands that say what they wrote.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_support.h"

namespace fs = std::filesystem;
using namespace bubblesim::cli_testing;

namespace {

constexpr const char* kSix = "scenarios/compare/six_schedules.yaml";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t longest_line(const std::string& text) {
  std::size_t most = 0;
  for (const std::string& l : lines_of(text)) most = std::max(most, l.size());
  return most;
}

/// The start of a verdict row: the rank, left-aligned under "rank", then the column gap.
std::string fmt_rank(std::size_t rank) {
  std::string s = std::to_string(rank);
  s.resize(4, ' ');
  return "\n" + s + "  ";
}

/// Where `label` first starts a line at or after `from` (a table row), or npos.
std::size_t row_of(const std::string& text, const std::string& label, std::size_t from) {
  for (std::size_t at = text.find("\n" + label + " ", from); at != std::string::npos;
       at = text.find("\n" + label + " ", at + 1)) {
    return at;
  }
  return std::string::npos;
}

}  // namespace

TEST_CASE("the six-schedule scenario: verdict first, 100 columns, compare sorted by speed") {
  Result json_run = run(std::string("run ") + kSix + " --format json");
  CHECK(json_run.code == 1);  // gpipe runs out of memory, optimized is infeasible
  nlohmann::json j = nlohmann::json::parse(json_run.out);
  REQUIRE(j["ranking"].is_array());
  std::vector<std::string> ranked;
  for (const auto& r : j["ranking"]) ranked.push_back(r["schedule"]);
  REQUIRE(ranked.size() == 4);  // the four that ran without failing

  for (const char* command : {"run", "compare"}) {
    CAPTURE(command);
    Result r = run(std::string(command) + " " + kSix);
    CHECK(r.code == 1);
    CHECK(longest_line(r.out) <= 100);
    std::vector<std::string> lines = lines_of(r.out);
    REQUIRE(lines.size() > 10);
    // The scenario line, then the verdict: the headline and the ranked table.
    CHECK(lines[0].rfind("scenario six-schedules:", 0) == 0);
    const std::size_t headline = r.out.find(ranked[0] + " is fastest:");
    CHECK(headline != std::string::npos);
    CHECK(headline < r.out.find("\nformula"));
    // Ranked rows in order, then the failures with their reason.
    std::size_t at = headline;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const std::size_t row = r.out.find(fmt_rank(i + 1) + ranked[i] + " ", at);
      CHECK(row != std::string::npos);
      at = row;
    }
    CHECK(r.out.find("failed (2):") != std::string::npos);
    CHECK(r.out.find("  gpipe: out of memory on device 0") != std::string::npos);
    CHECK(r.out.find("infeasible: no order fits") != std::string::npos);
  }
  // compare: the level tables in verdict order too, failed runs last.
  Result c = run(std::string("compare ") + kSix);
  const std::size_t sim = c.out.find("\nsimulation");
  REQUIRE(sim != std::string::npos);
  std::size_t previous = sim;
  for (const std::string& label : ranked) {
    const std::size_t row = row_of(c.out, label, previous);
    CHECK(row != std::string::npos);
    previous = row;
  }
  CHECK(row_of(c.out, "gpipe", previous) != std::string::npos);
  // compare has no detail sections; run has the memory table.
  CHECK(c.out.find("\nmemory ") == std::string::npos);
  CHECK(run(std::string("run ") + kSix).out.find("\nmemory ") != std::string::npos);
}

TEST_CASE("JSON ranking: fastest first with speed-ups against the baseline") {
  nlohmann::json j = nlohmann::json::parse(run(std::string("run ") + kSix + " --format json").out);
  CHECK(j["schema_version"] == 2);
  // Steady-state iteration time (whole iterations, optimizer step included) ranks the schedules.
  CHECK(j["ranking_metric"] == "simulation.iteration_time_s");
  CHECK(j["baseline"] == "1f1b");
  std::map<std::string, double> time;
  for (const auto& r : j["results"])
    if (r["status"] == "ok") time[r["label"]] = r["simulation"]["iteration_time_s"];
  double last = 0.0;
  std::size_t rank = 0;
  for (const auto& r : j["ranking"]) {
    const std::string label = r["schedule"];
    CHECK(time.at(label) >= last);
    last = time.at(label);
    CHECK(r["rank"].get<std::size_t>() > rank);
    rank = r["rank"];
    CHECK(r["speedup_vs_baseline"].get<double>() ==
          doctest::Approx(time.at("1f1b") / time.at(label)));
  }
  nlohmann::json zb = nlohmann::json::parse(
      run(std::string("run ") + kSix + " --format json --baseline zb-h1").out);
  for (const auto& r : zb["ranking"])
    if (r["schedule"] == "zb-h1") CHECK(r["speedup_vs_baseline"] == 1.0);
  Result bad = run(std::string("run ") + kSix + " --baseline nosuch");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--baseline: 'nosuch' is not a schedule of this run") != std::string::npos);
}

TEST_CASE("an infeasible optimizer entry next to five schedules: five results, one infeasible") {
  Result r = run(std::string("run ") + kSix + " --format json");
  CHECK(r.code == 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"].size() == 6);
  std::size_t ran = 0;
  const nlohmann::json* infeasible = nullptr;
  for (const auto& result : j["results"]) {
    if (result["status"] == "infeasible")
      infeasible = &result;
    else
      ++ran;
  }
  CHECK(ran == 5);
  REQUIRE(infeasible != nullptr);
  CHECK((*infeasible)["schedule"] == "optimized");
  CHECK((*infeasible)["simulation"].is_null());
  CHECK((*infeasible)["infeasible"]["reason"].get<std::string>().find("activation limit") !=
        std::string::npos);
  // The numbers that decide it, and a remedy that applies: offload and recompute are already on.
  std::set<std::string> facts;
  for (const auto& f : (*infeasible)["infeasible"]["facts"]) facts.insert(f["name"]);
  CHECK(facts == std::set<std::string>{"activation limit", "one activation (M_B)",
                                       "weight-gradient memory (M_W)", "static memory"});
  const std::string remedy = (*infeasible)["infeasible"]["remedy"];
  CHECK(remedy.find("raise budget") != std::string::npos);
  CHECK(remedy.find("offload") == std::string::npos);
  CHECK(remedy.find("recompute") == std::string::npos);
  // --fail-on none reports the same and exits 0.
  Result gate = run(std::string("run ") + kSix + " --fail-on none");
  CHECK(gate.code == 0);
  CHECK(gate.out.find("failed (2):") != std::string::npos);
}

TEST_CASE("a shape a schedule does not accept is infeasible: run and validate exit 1") {
  for (const char* file : {"tests/cli/infeasible_dualpipe_odd_stages.yaml",
                           "tests/cli/infeasible_interleaved_shape.yaml"}) {
    CAPTURE(file);
    Result r = run(std::string("run ") + file);
    CHECK(r.code == 1);
    CHECK(r.out.find("No schedule ran without failing.") != std::string::npos);
    CHECK(r.out.find(": infeasible: ") != std::string::npos);
    Result v = run(std::string("validate ") + file);
    CHECK(v.code == 1);
    CHECK(v.out.rfind(std::string(file) + ":", 0) == 0);  // located at the schedule entry
    CHECK(v.out.find("infeasible") != std::string::npos);
  }
  Result d = run("run tests/cli/infeasible_dualpipe_odd_stages.yaml");
  CHECK(d.out.find("dualpipe: infeasible: dualpipe needs an even number of devices p >= 2 (got "
                   "p = 3)") != std::string::npos);
  CHECK(run("validate scenarios/quickstart.yaml").code == 0);
}

TEST_CASE("run --format json -o FILE with an out-of-memory schedule writes the file and says so") {
  TempDir dir;
  const std::string out = dir.file("oom.json");
  Result r = run("run scenarios/memory/oom.yaml --format json -o '" + out + "'");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "wrote " + out + " (JSON report)\n1 of 1 schedules failed (" +
                     nlohmann::json::parse(slurp(out))["results"][0]["label"].get<std::string>() +
                     ": out_of_memory): exit 1\n");
  // No iteration completed: no iteration time (null), not 0 next to the others' times.
  CHECK(
      nlohmann::json::parse(slurp(out))["results"][0]["simulation"]["iteration_time_s"].is_null());
  const Result text = run("run scenarios/compare/six_schedules.yaml", "COLUMNS=100");
  const std::size_t gpipe =
      text.out.find("\ngpipe ", text.out.find("\n                  iteration"));
  REQUIRE(gpipe != std::string::npos);
  CHECK(text.out.substr(gpipe + 1, text.out.find('\n', gpipe + 1) - gpipe - 1).back() == '-');
  Result quiet = run("-q run scenarios/memory/oom.yaml --format json -o '" + out + "'");
  CHECK(quiet.code == 1);
  CHECK(quiet.err.empty());
}

TEST_CASE(
    "regress: every op 5% slower gives one regression per schedule, every metric with --all") {
  TempDir dir;
  const std::string base = dir.file("base.json"), same = dir.file("same.json"),
                    slow = dir.file("slow.json");
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + base + "'").code == 0);
  REQUIRE(run("run scenarios/quickstart.yaml --format json -o '" + same + "'").code == 0);
  std::string yaml = slurp(source("scenarios/quickstart.yaml"));
  for (auto [from, to] : {std::pair{"18.522ms", "19.4481ms"}, std::pair{"18.086ms", "18.9903ms"},
                          std::pair{"9.337ms", "9.80385ms"}}) {
    yaml.replace(yaml.find(from), std::string(from).size(), to);
  }
  std::ofstream(dir.file("slow.yaml")) << yaml;
  REQUIRE(run("run '" + dir.file("slow.yaml") + "' --format json -o '" + slow + "'").code == 0);

  Result none = run("regress --baseline '" + base + "' --current '" + same + "'");
  CHECK(none.code == 0);
  CHECK(none.out.find("no regression") != std::string::npos);
  CHECK(none.out.find("| regression |") == std::string::npos);

  auto regressions_of = [](const std::string& out) {
    std::set<std::string> regressions;
    for (const std::string& line : lines_of(out)) {
      const std::string verdict = "| regression |";
      if (line.size() > verdict.size() &&
          line.compare(line.size() - verdict.size(), verdict.size(), verdict) == 0)
        regressions.insert(line.substr(0, line.find(" | ", line.find(" | ") + 3)));
    }
    return regressions;
  };
  // By default one headline metric per schedule: the iteration time (the peak memory is the same).
  Result headline = run("regress --baseline '" + base + "' --current '" + slow + "'");
  CHECK(headline.code == 1);
  CHECK(regressions_of(headline.out) ==
        std::set<std::string>{"| gpipe | simulation.iteration_time_s",
                              "| 1f1b | simulation.iteration_time_s"});
  CHECK(headline.out.find("| gpipe | 1 |") != std::string::npos);
  // --all: per schedule the makespan at the table and simulation levels, the iteration time and
  // the throughput (higher is better, so 5% fewer samples/s is a regression too).
  Result r = run("regress --baseline '" + base + "' --current '" + slow + "' --all");
  CHECK(r.code == 1);
  std::set<std::string> expected;
  for (const char* schedule : {"gpipe", "1f1b"}) {
    for (const char* metric : {"table.makespan_s", "simulation.makespan_s",
                               "simulation.iteration_time_s", "simulation.samples_per_s"})
      expected.insert(fmt::format("| {} | {}", schedule, metric));
  }
  CHECK(regressions_of(r.out) == expected);
  // No informational metric in the table (the time of a peak, stage spans).
  CHECK(r.out.find("peak_memory_time") == std::string::npos);
  CHECK(r.out.find("stage_span_max_s |") == std::string::npos);
  // The per-schedule rollup and formatted values.
  CHECK(r.out.find("| schedule | regressions | improvements | worst change |") !=
        std::string::npos);
  CHECK(r.out.find("| gpipe | 4 |") != std::string::npos);
  CHECK(r.out.find(" s | +") != std::string::npos);
  // --only: the named metrics only; an unknown name is bad input.
  Result only = run("regress --baseline '" + base + "' --current '" + slow +
                    "' --only simulation.makespan_s");
  CHECK(only.code == 1);
  CHECK(only.out.find("table.makespan_s") == std::string::npos);
  CHECK(only.out.find("| 1f1b | simulation.makespan_s |") != std::string::npos);
  Result bad = run("regress --baseline '" + base + "' --current '" + slow + "' --only makespan");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--only: 'makespan' is not a metric") != std::string::npos);
}

TEST_CASE("table fits the width: one character per slot when the labelled grid is wider") {
  // zb-v on the six-schedule scenario was 2,407 columns with a label per slot.
  for (const char* width : {"", " --width 80"}) {
    CAPTURE(width);
    Result wide =
        run(std::string("table scenarios/compare/six_schedules.yaml --schedule zb-v") + width);
    CHECK(wide.code == 0);
    CHECK(longest_line(wide.out) <= (std::string(width).empty() ? 100u : 80u));
    CHECK(wide.out.find("one character each") != std::string::npos);
    CHECK(wide.out.find("legend: F forward") != std::string::npos);
    CHECK(wide.out.find("dev 7 | ") != std::string::npos);
  }
  Result slot = run("table scenarios/compare/six_schedules.yaml --schedule 1f1b --slot 10ms");
  CHECK(slot.out.find("slot = 10ms") != std::string::npos);
  CHECK(run("table scenarios/quickstart.yaml --schedule 1f1b --slot fast").code == 2);
}

TEST_CASE("with variability the verdict shows each time's spread: sd and p95 beside the mean") {
  const std::string noisy = R"(name: noisy
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 2ms, backward_input: 2ms, backward_weight: 1ms}
communication: {model: fixed-delay, delay: 0.1ms}
variability: {cv: 0.05, samples: 50, seed: 3}
schedules: [1f1b, zb-h1]
)";
  const fs::path dir = fs::temp_directory_path() / "bubblesim_verdict_spread";
  fs::create_directories(dir);
  const fs::path file = dir / "noisy.yaml";
  std::ofstream(file) << noisy;
  const Result r = run("run " + file.string());
  REQUIRE(r.code == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() > 6);
  CHECK(lines[2].find("(mean over samples; sd ") != std::string::npos);
  CHECK(lines[2].find(", p95 ") != std::string::npos);
  // The headings (one or two lines, above the rule) name both columns.
  const std::string headings = lines[4] + "\n" + lines[5];
  CHECK(headings.find(" sd") != std::string::npos);
  CHECK(headings.find(" p95") != std::string::npos);
  // Without variability neither the columns nor the note appear.
  const Result plain = run("run scenarios/quickstart.yaml");
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("p95") == std::string::npos);
  CHECK(plain.out.find("mean over samples") == std::string::npos);
  fs::remove_all(dir);
}
