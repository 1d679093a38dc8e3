// User strings in every output format: a scenario name holding a terminal escape sequence, a
// bell, a carriage return, newlines, Markdown and HTML must reach no output raw. The text report
// (a terminal) shows control characters as \xHH, Markdown escapes its syntax and HTML, CSV
// quotes, JSON escapes (and keeps the exact name).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_support.h"

using namespace bubblesim::cli_testing;

namespace {

// "ok\e[2K\r" erases the line and returns to its start: what follows would read as the report's
// own verdict; the newline starts a Markdown heading and the HTML a tag.
constexpr const char* kName = "x\x1b[2K\rbest: forged\x07\n## heading <b>raw</b> | `code` [l](u)";

constexpr const char* kScenario =
    R"yaml(name: "x\e[2K\rbest: forged\a\n## heading <b>raw</b> | `code` [l](u)"
pipeline: {stages: 2, microbatches: 4}
costs: {forward: 1ms, backward_input: 2ms}
schedules: [gpipe, 1f1b]
)yaml";

bool has_control(const std::string& s, bool newlines_allowed) {
  for (unsigned char c : s) {
    if (c == '\n' && newlines_allowed) continue;
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a scenario name's control characters and markup reach no output raw") {
  TempDir dir;
  const std::string s = dir.file("s.yaml");
  std::ofstream(s) << kScenario;

  Result text = run("run " + s);
  CAPTURE(text.err);
  REQUIRE(text.code == 0);
  CHECK_FALSE(has_control(text.out, true));
  CHECK(text.out.find("scenario x\\x1b[2K\\x0dbest: forged\\x07\\x0a## heading") !=
        std::string::npos);

  Result md = run("run " + s + " --format md");
  REQUIRE(md.code == 0);
  CHECK_FALSE(has_control(md.out, true));
  CHECK(md.out.find("<b>") == std::string::npos);
  CHECK(md.out.find("\n## heading") == std::string::npos);
  CHECK(md.out.find("&lt;b&gt;raw&lt;/b&gt; \\| \\`code\\` \\[l\\](u)") != std::string::npos);

  Result csv = run("run " + s + " --format csv");
  REQUIRE(csv.code == 0);
  CHECK_FALSE(has_control(csv.out, true));
  // One header and one row per schedule: the name's newline is inside a quoted field.
  const std::string quoted =
      "\"x\\x1b[2K\\x0dbest: forged\\x07\n## heading <b>raw</b> | `code` [l](u)\"";
  CHECK(csv.out.find(quoted + ",gpipe,") != std::string::npos);
  CHECK(csv.out.find(quoted + ",1f1b,") != std::string::npos);

  Result json = run("run " + s + " --format json");
  REQUIRE(json.code == 0);
  CHECK_FALSE(has_control(json.out, true));
  CHECK(nlohmann::json::parse(json.out)["scenario"]["name"] == kName);  // escaped, not changed
}

namespace {

/// Whether some line of `out` starts with `forged` (a user string that escaped its field).
bool line_starts_with(const std::string& out, const std::string& forged) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(forged, 0) == 0) return true;
  return false;
}

constexpr const char* kForged = "FORGED";

/// A user string that, left raw, would start a line of its own, drive a terminal, open a table
/// cell, a tag and a script.
const std::string kEvil =
    std::string("x\n") + kForged + ": line\x1b[31m\x07\r| cell | <script>alert(1)</script>";

}  // namespace

TEST_CASE("every user string through every writer comes out escaped, on the line it belongs to") {
  TempDir dir;
  // The user strings of a scenario: its name and description, a topology's vertex names (the
  // link tables and the fault lines print them), a fault's link.
  const std::string s = dir.file("s.yaml");
  {
    std::ofstream f(s);
    const nlohmann::json name = kEvil;  // a JSON string is a YAML string with the same escapes
    f << "name: " << name.dump() << "\ndescription: " << name.dump() << "\n"
      << "pipeline: {stages: 2, microbatches: 4}\n"
      << "costs: {forward: 1ms, backward_input: 2ms, p2p_bytes: 1MiB}\n"
      << "topology:\n  vertices: [{name: " << nlohmann::json(kEvil + "a").dump()
      << ", kind: gpu}, {name: " << nlohmann::json(kEvil + "b").dump() << ", kind: gpu}]\n"
      << "  links: [{between: [" << nlohmann::json(kEvil + "a").dump() << ", "
      << nlohmann::json(kEvil + "b").dump() << "], bandwidth: 10GB/s, latency: 1us}]\n"
      << "faults: {links: [{between: [" << nlohmann::json(kEvil + "a").dump() << ", "
      << nlohmann::json(kEvil + "b").dump() << "], at: 1ms, bandwidth: 1GB/s}]}\n"
      << "schedules: [gpipe, 1f1b]\n";
  }
  for (const std::string format : {"text", "md", "csv", "json"}) {
    CAPTURE(format);
    Result r = run("run " + s + " --format " + format);
    REQUIRE(r.code == 0);
    CHECK_FALSE(has_control(r.out, true));
    // CSV's rule is quoting: a field with a newline is one quoted field over two lines, which CSV
    // readers read back as the exact string (the first test case counts the records).
    if (format != "csv") CHECK_FALSE(line_starts_with(r.out, kForged));
    if (format == "md") {
      CHECK(r.out.find("<script>") == std::string::npos);
      CHECK(r.out.find("| cell |") == std::string::npos);
    }
  }
  const std::string html = dir.file("r.html");
  Result page = run("run " + s + " --html " + html + " -q -o " + dir.file("r.txt"));
  REQUIRE(page.code == 0);
  const std::string h = slurp(html);
  CHECK(h.find("<script>alert(1)</script>") == std::string::npos);
  CHECK(h.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(h.find('\x1b') == std::string::npos);

  // regress reads two JSON reports, which may hold anything: their labels and statuses through
  // its Markdown.
  Result base = run("run " + s + " --format json");
  REQUIRE(base.code == 0);
  nlohmann::json baseline = nlohmann::json::parse(base.out);
  for (auto& result : baseline["results"])
    result["label"] = kEvil + result["label"].get<std::string>();
  nlohmann::json current = baseline;
  for (auto& result : current["results"])
    result["simulation"]["makespan_s"] = result["simulation"]["makespan_s"].get<double>() * 2;
  current["results"].push_back(current["results"][0]);
  current["results"].back()["label"] = kEvil + "new";
  std::ofstream(dir.file("a.json")) << baseline.dump();
  std::ofstream(dir.file("b.json")) << current.dump();
  Result regress = run("regress --baseline " + dir.file("a.json") + " --current " +
                       dir.file("b.json") + " --all --fail-on none");
  CAPTURE(regress.out);
  CHECK(regress.code == 0);
  CHECK_FALSE(has_control(regress.out, true));
  CHECK_FALSE(line_starts_with(regress.out, kForged));
  CHECK(regress.out.find("<script>") == std::string::npos);
  CHECK(regress.out.find("| cell |") == std::string::npos);
  CHECK(regress.out.find("&lt;script&gt;") != std::string::npos);

  // Error lines: a value with a newline and a forged diagnostic stays on its line.
  const std::string bad = dir.file("bad.yaml");
  std::ofstream(bad) << "name: x\npipeline: {stages: 2, microbatches: 4}\n"
                        "costs: {forward: 1ms, backward_input: 2ms}\nschedules: ["
                     << nlohmann::json(kEvil).dump() << "]\n";
  Result error = run("run " + bad);
  CHECK(error.code == 2);
  CHECK_FALSE(has_control(error.err, true));
  CHECK_FALSE(line_starts_with(error.err, kForged));
  CHECK(error.err.find("\\x0aFORGED") != std::string::npos);
}
