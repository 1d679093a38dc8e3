#include "sim/units/yaml_reader.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace bubblesim;

namespace {

std::vector<std::string> rendered(const DiagnosticList& d) {
  std::vector<std::string> out;
  for (const Diagnostic& x : d.items()) out.push_back(x.render());
  return out;
}

// Reads `pipeline: {stages, microbatches}` like the scenario loader does.
std::vector<std::string> read_pipeline(const std::string& text) {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(text, "s.yaml", d);
  if (doc.ok()) {
    MapReader top(doc.root(), d, {"pipeline"});
    if (auto p = top.get("pipeline")) {
      MapReader pipe(*p, d, {"stages", "microbatches"});
      pipe.integer("stages", 1, 65536);
      pipe.integer("microbatches", 1, 1048576);
    }
  }
  return rendered(d);
}

}  // namespace

TEST_CASE("valid values read without diagnostics") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string(
      "a: 8\nb: 0.5\nc: true\nd: hello\ne: topology\nf: 1.5ms\ng: 80GiB\nh: 400Gbps\ni: "
      "989TFLOPS\n",
      "x.yaml", d);
  REQUIRE(doc.ok());
  MapReader m(doc.root(), d, {"a", "b", "c", "d", "e", "f", "g", "h", "i"});
  CHECK(m.integer("a", 1, 10) == 8);
  CHECK(m.real("b", 0, 1) == doctest::Approx(0.5));
  CHECK(m.boolean("c") == true);
  CHECK(m.string("d") == "hello");
  CHECK(m.choice("e", {"fixed-delay", "topology"}) == "topology");
  CHECK(m.time("f")->ps() == 1'500'000'000);
  CHECK(m.bytes("g")->count() == 80LL << 30);
  CHECK(m.bandwidth("h")->bytes_per_second() == doctest::Approx(50e9));
  CHECK(m.flop_rate("i")->flops_per_second() == doctest::Approx(989e12));
  CHECK_FALSE(m.get("missing").has_value());
  CHECK(m.has("a"));
  CHECK_FALSE(m.has("z"));
  m.finish();
  CHECK(d.empty());
}

TEST_CASE("unknown key with and without a suggestion, located at the key") {
  CHECK(read_pipeline("pipeline:\n  stagse: 8\n  microbatches: 4\n") ==
        std::vector<std::string>{
            "s.yaml:2:3: error: pipeline.stagse: unknown key 'stagse'; did you mean "
            "'stages'? (allowed: stages, microbatches)"});
  CHECK(read_pipeline("pipeline: {stages: 8, colour: red}\n") ==
        std::vector<std::string>{"s.yaml:1:23: error: pipeline.colour: unknown key 'colour' "
                                 "(allowed: stages, microbatches)"});
}

TEST_CASE("duplicate key, located at the second occurrence") {
  CHECK(read_pipeline("pipeline:\n  stages: 8\n  microbatches: 4\n  stages: 16\n") ==
        std::vector<std::string>{
            "s.yaml:4:3: error: pipeline.stages: duplicate key 'stages' (first given at line 2)"});
}

TEST_CASE("wrong types") {
  CHECK(read_pipeline("pipeline:\n  stages: eight\n") ==
        std::vector<std::string>{
            "s.yaml:2:11: error: pipeline.stages: expected an integer, got 'eight'"});
  CHECK(read_pipeline("pipeline: [1, 2]\n") ==
        std::vector<std::string>{"s.yaml:1:11: error: pipeline: expected a mapping, got a list"});
  CHECK(read_pipeline("pipeline:\n  stages: 8000000\n") ==
        std::vector<std::string>{
            "s.yaml:2:11: error: pipeline.stages: 8000000 is out of range (allowed: 1 to 65536)"});
  CHECK(read_pipeline("pipeline:\n  stages: 2.5\n") ==
        std::vector<std::string>{
            "s.yaml:2:11: error: pipeline.stages: expected an integer, got '2.5'"});
  CHECK(read_pipeline("pipeline:\n  stages:\n") ==
        std::vector<std::string>{
            "s.yaml:2:3: error: pipeline.stages: expected an integer, got an empty value"});

  DiagnosticList d;
  YamlDocument doc =
      YamlDocument::load_string("flag: yes please\nmodel: foo\nn: [1]\neff: 2\n", "b.yaml", d);
  REQUIRE(doc.ok());
  MapReader m(doc.root(), d, {"flag", "model", "n", "eff"});
  CHECK_FALSE(m.boolean("flag"));
  CHECK_FALSE(m.choice("model", {"fixed-delay", "topology"}));
  CHECK_FALSE(m.string("n"));
  CHECK_FALSE(m.real("eff", 0, 1));
  CHECK(rendered(d) ==
        std::vector<std::string>{
            "b.yaml:1:7: error: flag: expected true or false, got 'yes please'",
            "b.yaml:2:8: error: model: 'foo' is not allowed (allowed: fixed-delay, topology)",
            "b.yaml:3:4: error: n: expected a string, got a list",
            "b.yaml:4:6: error: eff: 2 is out of range (allowed: 0 to 1)",
        });
}

TEST_CASE("choice with a suggestion") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string("model: fixed-dely\n", "c.yaml", d);
  MapReader m(doc.root(), d, {"model"});
  m.choice("model", {"fixed-delay", "topology"});
  CHECK(rendered(d) == std::vector<std::string>{
                           "c.yaml:1:8: error: model: 'fixed-dely' is not allowed; did you mean "
                           "'fixed-delay'? (allowed: fixed-delay, topology)"});
}

TEST_CASE("missing unit and missing key") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string("costs:\n  forward: 18.5\n", "u.yaml", d);
  MapReader top(doc.root(), d, {"costs", "name"});
  top.require("name");
  MapReader costs(*top.get("costs"), d, {"forward"});
  costs.time("forward");
  CHECK(
      rendered(d) ==
      std::vector<std::string>{
          "u.yaml:1:1: error: missing required key 'name'",
          "u.yaml:2:12: error: costs.forward: '18.5' has no unit: a duration needs one of ps, ns, "
          "us, ms, s, min, h (e.g. 1.5ms)",
      });
}

TEST_CASE("sequences give indexed paths") {
  DiagnosticList d;
  YamlDocument doc =
      YamlDocument::load_string("schedules:\n  - gpipe\n  - {name: 7, x: 1}\n", "q.yaml", d);
  MapReader top(doc.root(), d, {"schedules"});
  auto els = top.get("schedules")->elements();
  REQUIRE(els.size() == 2);
  CHECK(els[0].path() == "schedules[0]");
  MapReader entry(els[1], d, {"name"});
  CHECK(entry.get("name")->path() == "schedules[1].name");
  entry.finish();
  CHECK(rendered(d) == std::vector<std::string>{
                           "q.yaml:3:15: error: schedules[1].x: unknown key 'x' (allowed: name)"});
}

TEST_CASE("several problems are reported at once") {
  auto r = read_pipeline("pipeline:\n  stages: eight\n  microbatchs: 4\n  microbatchs: 5\n");
  CHECK(r.size() == 3);
}

TEST_CASE("syntax errors keep the parser's message and position") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string("a: [1, 2\nb: 3\n", "bad.yaml", d);
  CHECK_FALSE(doc.ok());
  REQUIRE(d.size() == 1);
  CHECK(d.items()[0].where.line > 0);
  CHECK(d.items()[0].render().rfind("bad.yaml:", 0) == 0);
  CHECK(d.items()[0].message.find("flow") != std::string::npos);
}

TEST_CASE("empty file, missing file, too deep") {
  DiagnosticList d;
  CHECK_FALSE(YamlDocument::load_string("", "e.yaml", d).ok());
  CHECK_FALSE(YamlDocument::load_string("# only a comment\n", "e.yaml", d).ok());
  CHECK(rendered(d) == std::vector<std::string>{"e.yaml: error: the file is empty",
                                                "e.yaml: error: the file is empty"});

  DiagnosticList m;
  CHECK_FALSE(YamlDocument::load_file("/nonexistent/dir/x.yaml", m).ok());
  CHECK(rendered(m) == std::vector<std::string>{
                           "/nonexistent/dir/x.yaml: error: cannot open the file for reading"});

  DiagnosticList deep;
  std::string flow = std::string(100000, '[') + std::string(100000, ']');
  CHECK_FALSE(YamlDocument::load_string(flow, "deep.yaml", deep).ok());
  CHECK(rendered(deep) ==
        std::vector<std::string>{
            "deep.yaml:1:1: error: the YAML is nested deeper than 64 levels; input files are "
            "limited to that depth"});

  std::string block;
  for (int i = 0; i < 70; ++i)
    block += std::string(static_cast<std::size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
  DiagnosticList deep2;
  CHECK_FALSE(YamlDocument::load_string(block, "deep2.yaml", deep2).ok());
  REQUIRE(deep2.size() == 1);
  CHECK(deep2.items()[0].where.line == 65);

  std::string dashes;
  for (int i = 0; i < 70; ++i) dashes += "- ";
  dashes += "x\n";
  DiagnosticList deep3;
  CHECK_FALSE(YamlDocument::load_string(dashes, "deep3.yaml", deep3).ok());

  // Moderate nesting and brackets inside quotes or comments are fine.
  DiagnosticList ok;
  std::string quoted =
      "a: \"" + std::string(200, '[') + "\"  # " + std::string(200, '{') + "\nb: [[[1]]]\n";
  CHECK(YamlDocument::load_string(quoted, "ok.yaml", ok).ok());
  CHECK(ok.empty());
}

TEST_CASE("files over 16 MiB are refused") {
  DiagnosticList d;
  std::string big(std::size_t{16} * 1024 * 1024 + 1, '#');
  CHECK_FALSE(YamlDocument::load_string(big, "big.yaml", d).ok());
  CHECK(rendered(d) == std::vector<std::string>{"big.yaml: error: the file is too large (16777217 "
                                                "bytes; input files are limited to 16 MiB)"});
}

TEST_CASE("assigning a YamlNode rebinds it and leaves the document alone") {
  DiagnosticList d;
  YamlDocument doc = YamlDocument::load_string("a: [1, 2]\nb: x\n", "r.yaml", d);
  YamlNode list = doc.root().child("a");
  YamlNode at = list;
  at = at.elements()[1];
  CHECK(at.path() == "a[1]");
  CHECK(at.describe() == "2");
  CHECK(list.is_sequence());
  CHECK(doc.root().child("a").is_sequence());
  std::optional<YamlNode> opt = list;
  opt = doc.root().child("b");
  CHECK(doc.root().child("a").is_sequence());
}

TEST_CASE("a name without its variant suggests the one candidate it is the stem of") {
  const std::vector<std::string> gpus{"a100-40g", "a100-80g", "h100-sxm", "h200", "b200"};
  // `h100` is six edits from `h100-sxm`, too far for the edit distance, but its stem.
  CHECK(closest_match("h100", gpus) == "h100-sxm");
  // Two variants of one stem: neither is meant, and no guess by edit distance (`h200` is two
  // letters from `a100`, a wrong guess). A near miss still finds its word.
  CHECK(closest_match("a100", gpus).empty());
  CHECK(closest_match("h100-sx", gpus) == "h100-sxm");
  CHECK(closest_match("h20", gpus) == "h200");
  CHECK(closest_match("", gpus).empty());
}
