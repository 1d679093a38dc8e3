// `sweep --html` / `merge --html` through the real binary: the plot of a bubble-vs-memory sweep
// (tests/cli/sweep_plot/) has one polyline per schedule through its valid points, marks the
// out-of-memory points, names every schedule in the legend, and is the same bytes for the same CSV.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

// Fields of one CSV line with "..." quoting (the sweep quotes labels holding commas).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The CSV as one map per row, keyed by the header's column names.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::string text = slurp(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    std::vector<std::string> f = fields(text.substr(begin, end - begin));
    const bool comment = text[begin] == '#';  // the sweep's fingerprint line
    begin = end + 1;
    if (comment) continue;
    if (header.empty()) {
      header = f;
      continue;
    }
    REQUIRE(f.size() == header.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The `points` attribute of each polyline of `label`.
std::vector<std::string> polylines(const std::string& html, const std::string& label) {
  std::vector<std::string> out;
  const std::string key = "<polyline class=\"series\" data-label=\"" + label + "\" points=\"";
  for (std::size_t at = html.find(key); at != std::string::npos; at = html.find(key, at + 1)) {
    std::size_t begin = at + key.size();
    out.push_back(html.substr(begin, html.find('"', begin) - begin));
  }
  return out;
}

const std::string kSpec = "tests/cli/sweep_plot/budget.yaml";
const std::string kOptimized = "optimized(budget_evals=200,method=heuristic)";

}  // namespace

TEST_CASE(
    "sweep --html: bubble vs memory, one polyline per schedule, out-of-memory points marked") {
  TempDir dir;
  Result r = run("sweep " + kSpec + " --jobs 2 -o " + dir.file("curve.csv") + " --html " +
                 dir.file("curve.html"));
  REQUIRE(r.code == 0);
  const std::string html = slurp(dir.file("curve.html"));
  std::vector<std::map<std::string, std::string>> rows = read_csv(dir.file("curve.csv"));
  REQUIRE(rows.size() == 8);  // 4 budgets x 2 schedules

  // The setting the test is about: 1F1B (4 GiB of activations) is out of memory at 2 and 3 GiB.
  std::map<std::string, std::vector<std::map<std::string, std::string>>> by_label;
  for (const auto& row : rows) by_label[row.at("label")].push_back(row);
  REQUIRE(by_label.size() == 2);
  REQUIRE(by_label.count("1f1b") == 1);
  REQUIRE(by_label.count(kOptimized) == 1);
  CHECK(by_label["1f1b"][0].at("status") == "out_of_memory");
  CHECK(by_label["1f1b"][1].at("status") == "out_of_memory");

  for (const auto& [label, series] : by_label) {
    CAPTURE(label);
    std::size_t ok = 0;
    for (const auto& row : series) ok += row.at("status") == "ok" ? 1 : 0;
    // The invalid points of 1F1B are a prefix, so each schedule is one polyline of its ok points.
    std::vector<std::string> lines = polylines(html, label);
    REQUIRE(lines.size() == 1);
    CHECK(count(lines[0], ",") == ok);
    CHECK(count(html, "<circle class=\"point\" data-label=\"" + label + "\"") == ok);
    CHECK(count(html, "<g class=\"legend-entry\" data-label=\"" + label + "\">") == 1);
    for (const auto& row : series) {
      std::string marker =
          "data-label=\"" + label + "\" data-x=\"" + row.at("memory.budget") + "\"";
      if (row.at("status") == "ok") {
        // The drawn value is the CSV's.
        std::size_t at = html.find("<circle class=\"point\" " + marker + " data-y=\"");
        REQUIRE(at != std::string::npos);
        std::size_t begin = html.find("data-y=\"", at) + 8;
        CHECK(std::stod(html.substr(begin, html.find('"', begin) - begin)) ==
              doctest::Approx(std::stod(row.at("bubble_ratio_span"))));
        CHECK(count(html, "<circle class=\"missing\" " + marker) == 0);
      } else {
        CHECK(count(html, "<circle class=\"missing\" " + marker) == 1);
        CHECK(count(html, "<li class=\"missing\" data-label=\"" + label + "\">" + label +
                              " at memory.budget = " + row.at("memory.budget") +
                              ": out of memory</li>") == 1);
      }
    }
  }
  // x ticks carry the unit; the page is self-contained.
  CHECK(html.find(">4.0 GiB</text>") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);

  // The optimized bubble never rises as the budget grows (the rows are in budget order).
  const auto& optimized = by_label[kOptimized];
  REQUIRE(optimized.size() == 4);
  for (std::size_t i = 0; i < optimized.size(); ++i) {
    CAPTURE(optimized[i].at("memory.budget"));
    CHECK(optimized[i].at("status") == "ok");
    if (i > 0)
      CHECK(std::stod(optimized[i].at("bubble_ratio_span")) <=
            std::stod(optimized[i - 1].at("bubble_ratio_span")));
  }
  CHECK(std::stod(optimized.back().at("bubble_ratio_span")) <
        std::stod(optimized.front().at("bubble_ratio_span")));
}

TEST_CASE("sweep plots are the same bytes for the same CSV, sharded and merged or not") {
  TempDir dir;
  REQUIRE(
      run("sweep " + kSpec + " --jobs 1 -o " + dir.file("a.csv") + " --html " + dir.file("a.html"))
          .code == 0);
  REQUIRE(
      run("sweep " + kSpec + " --jobs 2 -o " + dir.file("b.csv") + " --html " + dir.file("b.html"))
          .code == 0);
  CHECK(slurp(dir.file("a.html")) == slurp(dir.file("b.html")));
  for (int i = 0; i < 2; ++i) {
    REQUIRE(run("sweep " + kSpec + " --shard " + std::to_string(i) + "/2 -o " +
                dir.file("p" + std::to_string(i) + ".csv"))
                .code == 0);
  }
  Result m = run("merge -o " + dir.file("m.csv") + " " + dir.file("p0.csv") + " " +
                 dir.file("p1.csv") + " --html " + dir.file("m.html"));
  REQUIRE(m.code == 0);
  CHECK(slurp(dir.file("m.csv")) == slurp(dir.file("a.csv")));
  CHECK(slurp(dir.file("m.html")) == slurp(dir.file("a.html")));
  // Another column: the drawn values change with it.
  REQUIRE(run("sweep " + kSpec + " -o " + dir.file("c.csv") + " --html " + dir.file("c.html") +
              " --plot-metric peak_activation_units")
              .code == 0);
  std::string c = slurp(dir.file("c.html"));
  CHECK(c.find("data-label=\"" + kOptimized + "\" data-x=\"6GiB\" data-y=\"6\"") !=
        std::string::npos);
}

TEST_CASE("sweep --html with two axes: one chart per value of the second") {
  TempDir dir;
  Result r = run("sweep tests/cli/sweep_plot/budget_delay.yaml -o " + dir.file("d.csv") +
                 " --html " + dir.file("d.html"));
  REQUIRE(r.code == 0);
  std::string html = slurp(dir.file("d.html"));
  CHECK(count(html, "<svg class=\"chart\"") == 2);
  CHECK(html.find("<h2>communication.delay = 0ms</h2>") != std::string::npos);
  CHECK(html.find("<h2>communication.delay = 0.1ms</h2>") != std::string::npos);
  CHECK(count(html, "<polyline class=\"series\" data-label=\"" + kOptimized + "\"") == 2);
}

TEST_CASE("sweep plot input errors") {
  TempDir dir;
  Result r = run("sweep " + kSpec + " -o " + dir.file("x.csv") + " --html " + dir.file("x.html") +
                 " --plot-metric bubble");
  CHECK(r.code == 2);
  CHECK(r.err.find("--plot-metric: 'bubble' is not a numeric column of the sweep CSV") !=
        std::string::npos);
  CHECK(r.err.find("allowed: formula_bubble_ratio,") != std::string::npos);
  CHECK(r.err.find("bubble_ratio_span") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("x.csv")));  // refused before running anything
  CHECK_FALSE(fs::exists(dir.file("x.html")));

  Result s = run("sweep " + kSpec + " --shard 0/2 -o " + dir.file("s.csv") + " --html " +
                 dir.file("s.html"));
  CHECK(s.code == 2);
  CHECK(s.err.find("bubblesim merge") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("s.html")));

  Result m = run("merge -o " + dir.file("m.csv") + " " + dir.file("none.csv") + " --html " +
                 dir.file("m.html") + " --plot-metric nope");
  CHECK(m.code == 2);
  CHECK(m.err.find("--plot-metric: 'nope'") != std::string::npos);
}
