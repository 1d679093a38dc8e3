// User strings in every output format: a scenario name holding a terminal escape sequence, a
// bell, a carriage return, newlines, Markdown and HTML must reach no output raw. The text report
// (a terminal) shows control characters as \xHH, Markdown escapes its syntax and HTML, CSV
// quotes, JSON escapes (and keeps the exact name).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
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
