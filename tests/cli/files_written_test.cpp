// "Says what it wrote": every command that writes files names each one on stderr
// ("wrote PATH (WHAT)"), in the order written, and -q (before or after the command) silences
// those lines while the files are still written. Output to stdout names nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <utility>
#include <vector>

#include "cli_support.h"

namespace fs = std::filesystem;

using namespace bubblesim::cli_testing;

namespace {

struct Written {
  std::string file;  // under the test's folder
  std::string what;  // the parenthesised description; "*" accepts any
};

/// The "wrote ..." lines of `err`.
std::vector<std::string> wrote_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("wrote ", 0) == 0) lines.push_back(line);
  return lines;
}

/// Runs `args` (with "{D}" replaced by a fresh folder, after running `setup` there) and checks
/// the lines and files, then again with -q before and after the command.
void check_says_written(const std::string& args, const std::vector<Written>& expected,
                        const std::string& setup = "", int code = 0) {
  for (const char* quiet : {"", "-q ", " -q"}) {
    CAPTURE(args);
    CAPTURE(quiet);
    TempDir dir;
    auto in_dir = [&](std::string cmd) {
      for (std::size_t at; (at = cmd.find("{D}")) != std::string::npos;)
        cmd.replace(at, 3, dir.path.string());
      return cmd;
    };
    if (!setup.empty()) REQUIRE(run("-q " + in_dir(setup)).code == 0);
    const Result r = run(in_dir(quiet[0] == '-' ? quiet + args : args + quiet));
    CHECK(r.code == code);
    const std::vector<std::string> lines = wrote_lines(r.err);
    if (*quiet != '\0') {
      CHECK(lines.empty());
    } else {
      REQUIRE(lines.size() == expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::string prefix = "wrote " + dir.file(expected[i].file) + " (";
        CHECK(lines[i].rfind(prefix, 0) == 0);
        if (expected[i].what != "*") CHECK(lines[i] == prefix + expected[i].what + ")");
      }
    }
    for (const Written& w : expected) CHECK(fs::exists(dir.file(w.file)));
  }
}

}  // namespace

TEST_CASE("run and compare name every file they write; -q silences them") {
  check_says_written("run scenarios/quickstart.yaml -o {D}/r.txt", {{"r.txt", "text report"}});
  check_says_written("run scenarios/quickstart.yaml --format json -o {D}/r.json",
                     {{"r.json", "JSON report"}});
  check_says_written("run scenarios/quickstart.yaml --format csv -o {D}/r.csv",
                     {{"r.csv", "CSV report"}});
  check_says_written("run scenarios/quickstart.yaml --format md -o {D}/r.md",
                     {{"r.md", "Markdown report"}});
  check_says_written(
      "run scenarios/quickstart.yaml --trace {D}/t.json --html {D}/h.html -o {D}/r.txt",
      {{"t.gpipe.json", "Chrome trace of gpipe"},
       {"t.1f1b.json", "Chrome trace of 1f1b"},
       {"h.html", "HTML report"},
       {"r.txt", "text report"}});
  check_says_written("run scenarios/quickstart.yaml --trace {D}/t.json --trace-combined",
                     {{"t.json", "Chrome trace, a process group per schedule: 2"}});
  check_says_written("compare scenarios/quickstart.yaml --html {D}/h.html -o {D}/c.txt",
                     {{"h.html", "HTML report"}, {"c.txt", "text report"}});
  // To stdout: nothing to name.
  check_says_written("run scenarios/quickstart.yaml -o -", {});
}

TEST_CASE("table names the grid, CSV and PyTorch files and every Chakra trace; -q silences them") {
  check_says_written("table scenarios/quickstart.yaml --schedule 1f1b -o {D}/g.txt",
                     {{"g.txt", "grid"}});
  check_says_written("table scenarios/quickstart.yaml --schedule 1f1b --format csv -o {D}/t.csv",
                     {{"t.csv", "table CSV"}});
  check_says_written(
      "table scenarios/quickstart.yaml --schedule 1f1b --format torch-csv -o {D}/t.csv",
      {{"t.csv", "PyTorch schedule CSV"}});
  std::vector<Written> ranks;  // the quickstart has 8 stages
  for (int r = 0; r < 8; ++r) {
    ranks.push_back({"et/bubblesim." + std::to_string(r) + ".et",
                     "Chakra execution trace of rank " + std::to_string(r)});
  }
  check_says_written("table scenarios/quickstart.yaml --schedule 1f1b --format chakra -o {D}/et",
                     ranks);
}

TEST_CASE("sweep, merge and regress name the files they write; -q silences them") {
  check_says_written(
      "sweep tests/cli/sweep_plot/budget.yaml --jobs 1 -o {D}/s.csv --html {D}/s.html",
      {{"s.csv", "*"}, {"s.html", "plot of bubble_ratio_span"}});
  check_says_written("merge -o {D}/m.csv {D}/p.csv --html {D}/m.html",
                     {{"m.csv", "1 parts merged"}, {"m.html", "plot of bubble_ratio_span"}},
                     "sweep tests/cli/sweep_plot/budget.yaml --jobs 1 --shard 0/1 -o {D}/p.csv");
  check_says_written(
      "regress --baseline {D}/a.json --current {D}/a.json --benchmark-json {D}/b.json",
      {{"b.json", "github-action-benchmark JSON"}},
      "run scenarios/quickstart.yaml --format json -o {D}/a.json");
}
