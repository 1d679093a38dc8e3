// Reading inputs (sim/units/text_file.h), the YAML checks yaml-cpp does not make
// (yaml_document_checks.h) and how messages echo values (diagnostics.h).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/units/diagnostics.h"
#include "sim/units/quantity_parser.h"
#include "sim/units/text_file.h"
#include "sim/units/yaml_reader.h"

using namespace bubblesim;
namespace fs = std::filesystem;

namespace {

std::string problem_reading(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes) {
  std::string text;
  return read_input_file(path, text, InputSource::file, max_bytes).value_or("");
}

}  // namespace

TEST_CASE("only regular files are inputs, read with a bound") {
  const fs::path dir = fs::temp_directory_path() / ("input_file_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "a.txt").string(), fifo = (dir / "fifo").string();
  std::ofstream(file) << "hello\n";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

  CHECK(read_text_file(file) == "hello\n");
  CHECK(problem_reading(dir.string()) == "is a folder, not a file");
  CHECK(problem_reading("/dev/zero") == "is a device, not a regular file");
  CHECK(problem_reading(fifo) == "is a FIFO (pipe), not a regular file");  // and no hang
  CHECK(problem_reading((dir / "missing").string()) == "cannot open the file for reading");
  CHECK(problem_reading("") == "the file name is empty");
  CHECK(problem_reading(file, 3) ==
        "the file is too large (over 3 bytes; input files are limited to 0 MiB)");
  CHECK_THROWS_WITH_AS(read_text_file("/dev/zero"),
                       "error: /dev/zero: is a device, not a regular file", InputError);

  // A FIFO is a stream where streams are allowed: without a writer it reads as empty.
  std::string text = "x";
  CHECK_FALSE(read_input_file(fifo, text, InputSource::file_or_stream).has_value());
  CHECK(text.empty());

  // Regular files read are remembered by device and inode, streams and failures are not.
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  bool found = false;
  for (const InputFileIdentity& f : input_files_read())
    found = found || (f.device == st.st_dev && f.inode == st.st_ino);
  CHECK(found);
  fs::remove_all(dir);
}

TEST_CASE(
    "a NUL byte, bytes that are not UTF-8 and a second document are refused with their location") {
  DiagnosticList nul;
  CHECK_FALSE(YamlDocument::load_string(std::string("a: 1\nb: x\0y\n", 12), "n.yaml", nul).ok());
  REQUIRE(nul.size() == 1);
  CHECK(nul.items()[0].render() ==
        "n.yaml:2:5: error: the file contains a NUL byte (input files are text)");

  // Bytes that are not UTF-8 (here Latin-1 'é') are refused at the byte, with its value.
  DiagnosticList latin1;
  CHECK_FALSE(YamlDocument::load_string("a: 1\nname: caf\xe9\n", "l.yaml", latin1).ok());
  REQUIRE(latin1.size() == 1);
  CHECK(latin1.items()[0].render() ==
        "l.yaml:2:10: error: byte 0xE9 is not UTF-8 (input files are UTF-8 text; save the file "
        "as UTF-8)");
  for (const char* bad : {"a: \xc0\xaf\n", "a: \xed\xa0\x80\n", "a: \xf4\x90\x80\x80\n",
                          "a: \xe2\x82\n", "a: \x80\n", "a: \xf8\x88\x80\x80\x80\n"}) {
    CAPTURE(bad);
    DiagnosticList d;
    CHECK_FALSE(YamlDocument::load_string(bad, "b.yaml", d).ok());
    CHECK(d.items().at(0).where.column == 4);
  }
  DiagnosticList fine;
  CHECK(YamlDocument::load_string("\xef\xbb\xbf"
                                  "a: \"caf\u00e9 \u20ac \U0001f600\"\n",
                                  "u.yaml", fine)
            .ok());

  DiagnosticList two;
  CHECK_FALSE(YamlDocument::load_string("a: 1\n---\nb: 2\n", "t.yaml", two).ok());
  REQUIRE(two.size() == 1);
  CHECK(two.items()[0].where.line == 3);
  DiagnosticList empty_second;
  CHECK_FALSE(YamlDocument::load_string("a: 1\n---\n", "e.yaml", empty_second).ok());

  // One document, with or without markers, and '---' inside a value are fine.
  for (const char* ok : {"---\na: 1\n", "a: 1\n...\n", "a: '---'\nb: |\n  x\n  ---\n"}) {
    DiagnosticList d;
    CHECK(YamlDocument::load_string(ok, "ok.yaml", d).ok());
    CHECK(d.empty());
  }
}

TEST_CASE("durations below one picosecond are refused, not rounded to 0") {
  CHECK_THROWS_AS(parse_time("1e-15s"), QuantityError);
  CHECK_THROWS_AS(parse_time("0.4ps"), QuantityError);
  CHECK(parse_time("0s") == Time::zero());
  CHECK(parse_time("1ps") == Time::from_ps(1));
  CHECK(parse_time("1.4ps") == Time::from_ps(1));
}

TEST_CASE("messages shorten long values and escape control characters") {
  const std::string value(300, 'v');
  Diagnostic d{{"f.yaml", 1, 2}, "key", "bad value '" + value + "' (allowed: x)"};
  CHECK(d.render() ==
        "f.yaml:1:2: error: key: bad value '" + std::string(200, 'v') + "\u2026' (allowed: x)");
  Diagnostic esc{{"f.yaml", 1, 2}, "", "unknown key '\x1b[31mred\a'"};
  CHECK(esc.render() == "f.yaml:1:2: error: unknown key '\\x1b[31mred\\x07'");
  // Bytes that are not UTF-8 and C1 controls (U+009B is a terminal's CSI) are escaped too;
  // well-formed characters are kept.
  Diagnostic bytes{{}, "", "'\xff\xc0\xaf\xc2\x9b[31m caf\u00e9 \U0001f600'"};
  CHECK(bytes.render() == "error: '\\xff\\xc0\\xaf\\xc2\\x9b[31m caf\u00e9 \U0001f600'");
  // A newline inside a quoted value is the user's: written \x0a. One the message has (a list of
  // problems) stays, but every line after it is indented, so none can read as a diagnostic of
  // its own.
  Diagnostic quoted{{}, "", "unknown schedule 'x\nf.yaml:9:9: error: forged'"};
  CHECK(quoted.render() == "error: unknown schedule 'x\\x0af.yaml:9:9: error: forged'");
  Diagnostic lines{{}, "", "first\nf.yaml:9:9: error: forged\n  already indented"};
  CHECK(lines.render() == "error: first\n  f.yaml:9:9: error: forged\n  already indented");
  // An apostrophe inside a word is not a quote: what follows it is not shortened as a value.
  Diagnostic apostrophe{{}, "", "the GPU's peak " + value};
  CHECK(apostrophe.render() == "error: the GPU's peak " + value);
  // A multi-byte character is not cut in half.
  std::string accents;
  for (int i = 0; i < 150; ++i) accents += "\u00e9";  // 2 bytes each
  Diagnostic utf8{{}, "", "'" + accents + "'"};
  CHECK(utf8.render() == "error: '" + accents.substr(0, 200) + "\u2026'");
}

TEST_CASE("an error with very many problems shows the first 50 and counts the rest") {
  std::vector<Diagnostic> many;
  for (int i = 0; i < 60; ++i) many.push_back({{"f.csv", i + 1, 1}, "", "bad cell"});
  const std::string what = InputError(many).what();
  CHECK(std::count(what.begin(), what.end(), '\n') == 50);
  CHECK(what.rfind("f.csv:1:1: error: bad cell\n", 0) == 0);
  CHECK(what.find("f.csv:50:1: error: bad cell\n... and 10 more problems (the first 50 are "
                  "shown)") != std::string::npos);
  CHECK(InputError(many).diagnostics().size() == 60);
}
