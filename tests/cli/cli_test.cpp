// Runs the real `bubblesim` binary and checks its output and exit codes.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// A unique temporary file name per call (test binaries may run in parallel).
std::string fmt_name() {
  static int counter = 0;
  return "bubblesim_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

std::string source(const std::string& rel) { return std::string(BUBBLESIM_SOURCE_DIR) + "/" + rel; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs from the source folder so that paths in messages are relative ("tests/errors/x.yaml").
Result run(const std::string& args) {
  fs::path err_file = fs::temp_directory_path() / fmt_name();
  std::string cmd = "cd '" + std::string(BUBBLESIM_SOURCE_DIR) + "' && '" + BUBBLESIM_BINARY + "' " + args + " 2>'" +
                    err_file.string() + "'";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file.string());
  fs::remove(err_file);
  return r;
}

}  // namespace

TEST_CASE("--version and --help") {
  Result v = run("--version");
  CHECK(v.code == 0);
  CHECK(v.out.rfind("bubblesim ", 0) == 0);
  Result h = run("--help");
  CHECK(h.code == 0);
  for (const char* cmd : {"run", "compare", "table", "list", "explain", "validate"}) CHECK(h.out.find(cmd) != std::string::npos);
}

TEST_CASE("run quickstart prints the three levels") {
  Result r = run("run scenarios/quickstart.yaml");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("formula") != std::string::npos);
  CHECK(r.out.find("table (no comm)") != std::string::npos);
  CHECK(r.out.find("simulation") != std::string::npos);
  CHECK(r.out.find("1f1b") != std::string::npos);
}

TEST_CASE("the JSON report has the documented layout and is deterministic apart from run") {
  Result a = run("run scenarios/quickstart.yaml --format json");
  Result b = run("run scenarios/quickstart.yaml --format json");
  REQUIRE(a.code == 0);
  auto ja = nlohmann::json::parse(a.out);
  auto jb = nlohmann::json::parse(b.out);
  CHECK(ja["schema_version"] == 1);
  CHECK(ja["scenario"]["name"] == "quickstart");
  REQUIRE(ja["results"].size() == 2);
  const auto& r = ja["results"][1];
  CHECK(r["schedule"] == "1f1b");
  CHECK(r["status"] == "ok");
  for (const char* k : {"bubble_ratio", "peak_activation_units"}) CHECK(r["formula"].contains(k));
  for (const char* k : {"makespan_s", "bubble_ratio"}) CHECK(r["table"].contains(k));
  for (const char* k : {"makespan_s", "stage_span_max_s", "bubble_ratio", "bubble_ratio_span", "peak_activation_bytes",
                        "peak_activation_bytes_per_device", "peak_activation_units", "exposed_comm_s"}) {
    CHECK(r["simulation"].contains(k));
  }
  for (const char* k : {"wall_time_s", "events", "events_per_s"}) CHECK(r["run"].contains(k));
  // 1F1B of the quickstart is the ZB paper's 1.5B row with m = 24: bubble rate 0.2431.
  CHECK(r["simulation"]["bubble_ratio_span"].get<double>() == doctest::Approx(0.2431).epsilon(2e-4));
  ja.erase("run");
  jb.erase("run");
  for (auto* j : {&ja, &jb}) for (auto& x : (*j)["results"]) x.erase("run");
  CHECK(ja.dump() == jb.dump());
}

TEST_CASE("--schedule restricts the run and an unknown one is bad input") {
  Result r = run("run scenarios/quickstart.yaml --schedule 1f1b --format csv");
  CHECK(r.code == 0);
  CHECK(r.out.find(",gpipe,") == std::string::npos);
  CHECK(r.out.find(",1f1b,") != std::string::npos);
  Result bad = run("run scenarios/quickstart.yaml --schedule 1fib");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown schedule '1fib'; did you mean '1f1b'?") != std::string::npos);
}

TEST_CASE("-o writes the report to a file") {
  fs::path out = fs::temp_directory_path() / (fmt_name() + ".json");
  Result r = run("run scenarios/quickstart.yaml --format json -o '" + out.string() + "'");
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  auto j = nlohmann::json::parse(slurp(out.string()));
  CHECK(j["results"].size() == 2);
  fs::remove(out);
}

TEST_CASE("table prints the device x slot grid") {
  Result r = run("table scenarios/quickstart.yaml --schedule 1f1b");
  CHECK(r.code == 0);
  CHECK(r.out.find("dev 0 |") != std::string::npos);
  CHECK(r.out.find("dev 7 |") != std::string::npos);
}

TEST_CASE("list and explain") {
  Result l = run("list");
  CHECK(l.code == 0);
  CHECK(l.out.find("gpipe") != std::string::npos);
  Result e = run("explain 1f1b");
  CHECK(e.code == 0);
  CHECK(e.out.rfind("1f1b: ", 0) == 0);
  Result bad = run("explain gpip");
  CHECK(bad.code == 2);
  CHECK(bad.err == "error: unknown schedule 'gpip'; did you mean 'gpipe'? (known: " + std::string("") +
                       bad.err.substr(bad.err.find("(known: ") + 8));
}

TEST_CASE("every file of the error corpus fails with its expected first line and exit code 2") {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(source("tests/errors"))) {
    if (entry.path().extension() != ".expected") continue;
    fs::path input = entry.path();
    input.replace_extension("");  // NAME.yaml.expected -> NAME.yaml, NAME.expected -> NAME
    if (input.extension() != ".yaml") input += ".yaml";
    std::string expected = slurp(entry.path().string());
    while (!expected.empty() && (expected.back() == '\n' || expected.back() == '\r')) expected.pop_back();
    std::string rel = "tests/errors/" + input.filename().string();
    CAPTURE(rel);
    Result r = run("run " + rel);
    CHECK(r.code == 2);
    std::string first = r.err.substr(0, r.err.find('\n'));
    CHECK(first == expected);
    ++checked;
  }
  CHECK(checked >= 5);
}

TEST_CASE("a missing scenario file is bad input") {
  Result r = run("run no/such/file.yaml");
  CHECK(r.code == 2);
  CHECK(r.err.find("no/such/file.yaml") != std::string::npos);
}

TEST_CASE("run --trace writes one trace per schedule and --html one report") {
  fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  Result r = run("run scenarios/quickstart.yaml --trace '" + (dir / "trace.json").string() + "' --html '" +
                 (dir / "report.html").string() + "'");
  CHECK(r.code == 0);
  CHECK(r.err.empty());  // no progress line: stderr is not a terminal
  CHECK_FALSE(fs::exists(dir / "trace.json"));
  for (const char* label : {"gpipe", "1f1b"}) {
    fs::path trace = dir / (std::string("trace.") + label + ".json");
    REQUIRE(fs::exists(trace));
    nlohmann::json j = nlohmann::json::parse(slurp(trace.string()));
    CHECK(j.at("otherData").at("schedule") == label);
  }
  CHECK(slurp((dir / "report.html").string()).find("bubblesim-data") != std::string::npos);
  // One schedule: the file name as given.
  Result one = run("run scenarios/quickstart.yaml --schedule 1f1b --trace '" + (dir / "one.json").string() + "'");
  CHECK(one.code == 0);
  CHECK(fs::exists(dir / "one.json"));
  fs::remove_all(dir);
}
