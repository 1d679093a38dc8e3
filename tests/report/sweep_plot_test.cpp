// The sweep plot renderer on hand-written CSVs: gaps, invalid points, categorical axes, quoting.
#include "sim/report/sweep_plot.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "sim/report/text_report.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

std::string header(const std::string& axes) {
  std::string report = csv_report_header();
  report.pop_back();
  return "point,entry," + axes + "," + report + ",error\n";
}

// A row whose only metric is bubble_ratio_span, built from the report's column list.
std::string row(int point, int entry, const std::string& axes, const std::string& label,
                const std::string& status, const std::string& span) {
  std::string header = csv_report_header(), cells;
  header.pop_back();
  std::size_t from = 0;
  for (std::size_t comma = 0; comma != std::string::npos; from = comma + 1) {
    comma = header.find(',', from);
    const std::string column = header.substr(from, comma - from);
    cells += from == 0 ? "" : ",";
    cells += column == "scenario"            ? "s"
             : column == "schedule"          ? "x"
             : column == "label"             ? csv_quote(label)
             : column == "status"            ? status
             : column == "bubble_ratio_span" ? span
                                             : "";
  }
  return fmt::format("{},{},{},{},\n", point, entry, axes, cells);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a point without a value breaks the line and is listed; categories are evenly spaced") {
  std::string csv = header("policy") + row(0, 0, "a", "p,q", "ok", "0.5") +
                    row(1, 0, "b", "p,q", "deadlock", "0.4") + "2,0,c," +
                    csv_report_cells_without_run("invalid") + ",\"bad \"\"value\"\"\"\n" +
                    row(3, 0, "d", "p,q", "ok", "0.25") + row(4, 0, "e", "p,q", "ok", "0.125");
  std::string html = render_sweep_plot(csv, "bubble_ratio_span", "t.csv");
  // Two runs of valid points: [a] and [d, e].
  CHECK(count(html, "<polyline class=\"series\" data-label=\"p,q\"") == 2);
  CHECK(count(html, "<circle class=\"point\"") == 3);
  CHECK(count(html, "<circle class=\"missing\" data-label=\"p,q\" data-x=\"b\"") == 1);
  CHECK(count(html, "<circle class=\"missing\" data-label=\"p,q\" data-x=\"c\"") == 1);
  CHECK(html.find("p,q at policy = b: deadlock</li>") != std::string::npos);
  CHECK(html.find("p,q at policy = c: invalid scenario: bad &quot;value&quot;</li>") !=
        std::string::npos);
  // Categorical ticks: every value, as written.
  for (const char* v : {">a</text>", ">b</text>", ">c</text>", ">d</text>", ">e</text>"})
    CHECK(html.find(v) != std::string::npos);
}

TEST_CASE("numeric axes: plain numbers and times get ticks with their unit") {
  std::string csv = header("costs.forward") + row(0, 0, "500us", "1f1b", "ok", "0.1") +
                    row(1, 0, "1ms", "1f1b", "ok", "0.2") + row(2, 0, "2ms", "1f1b", "ok", "0.3");
  std::string html = render_sweep_plot(csv, "bubble_ratio_span", "t.csv");
  CHECK(html.find(">1.0 ms</text>") != std::string::npos);
  CHECK(html.find(">2.0 ms</text>") != std::string::npos);
  CHECK(html.find(">500us</text>") == std::string::npos);  // not a category
  // Plain numbers: ticks without a unit.
  std::string plain =
      header("pipeline.stages") + row(0, 0, "2", "g", "ok", "1") + row(1, 0, "8", "g", "ok", "2");
  std::string p = render_sweep_plot(plain, "bubble_ratio_span", "t.csv");
  CHECK(p.find(">8</text>") != std::string::npos);
}

TEST_CASE("bad input: an unknown metric, a CSV that is not a sweep's") {
  CHECK_THROWS_AS(check_sweep_plot_metric("bubble_ratio_spam"), InputError);
  try {
    check_sweep_plot_metric("bubble_ratio_spam");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("did you mean 'bubble_ratio_span'") != std::string::npos);
  }
  CHECK_THROWS_AS(render_sweep_plot("a,b\n1,2\n", "bubble_ratio_span", "t.csv"), InputError);
  CHECK_THROWS_AS(render_sweep_plot(header("x") + "0,0,\"open\n", "bubble_ratio_span", "t.csv"),
                  InputError);
  // An empty sweep is a page that says so.
  CHECK(render_sweep_plot(header("x"), "bubble_ratio_span", "t.csv").find("holds no rows") !=
        std::string::npos);
}
