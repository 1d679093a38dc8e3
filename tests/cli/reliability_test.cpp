// Reliability of the CLI: simulated faults in the report, resource limits and overflow as exit 2,
// and output files that are never torn when the process is killed mid-write.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& text, const std::string& ext = ".yaml") {
  fs::path p = fs::temp_directory_path() / (fmt_name() + ext);
  std::ofstream(p) << text;
  return p.string();
}

// Temporary files of write_file_atomically (".NAME.tmp.PID") in `dir`.
int temp_files_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

// Runs a shell command in the source folder, output discarded (for `timeout -s KILL ...`).
void shell(const std::string& command) {
  const std::string full =
      "cd '" + std::string(BUBBLESIM_SOURCE_DIR) + "' && " + command + " >/dev/null 2>&1";
  (void)std::system(full.c_str());
}

}  // namespace

TEST_CASE("a straggler is reported with the makespan without faults") {
  const std::string path = write_temp(R"(name: straggler
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 1ms, backward_input: 2ms}
faults: {stragglers: [{device: 2, slowdown: 1.5}]}
schedules: [1f1b]
)");
  Result r = run("run '" + path + "'");
  CHECK(r.code == 0);
  CHECK(r.out.find("device 2: compute 1.5x slower (straggler)") != std::string::npos);
  // 1F1B, p = 4, m = 8, T_F = 1ms, T_B = 2ms: 33 ms healthy; device 2 at 1.5x gives
  // 2*3 + 1.5*8*3 + 1*(max(0, 3-1.5) + max(0, 3-3)) = 43.5 ms (tests/engine/faults_test.cpp).
  CHECK(r.out.find("43.500") != std::string::npos);
  CHECK(r.out.find("33.000") != std::string::npos);
  CHECK(r.out.find("+31.82%") != std::string::npos);
  Result j = run("run '" + path + "' --format json");
  CHECK(j.out.find("\"fault_free\"") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("a cut link that stalls a transfer ends as a reported deadlock, not a hang") {
  const std::string path = write_temp(
      "name: cut\n"
      "pipeline: {stages: 2, microbatches: 4}\n"
      "costs: {forward: 1ms, backward_input: 2ms, p2p_bytes: 50MB}\n"
      "topology: " +
      source("scenarios/topologies/two-gpus.yaml") +
      "\n"
      "faults: {links: [{between: [gpu0, gpu1], at: 1.5ms, cut: true}]}\n"
      "schedules: [gpipe]\n");
  Result r = run("run '" + path + "'");
  CHECK(r.code == 1);
  CHECK(r.out.find("link gpu0 <-> gpu1 from 1.5ms: cut") != std::string::npos);
  CHECK(r.out.find("stalled on a cut link: transfer F0.0 (device 0) -> F1.0 (device 1)") !=
        std::string::npos);
  fs::remove(path);
}

TEST_CASE("--max-ops refuses large tables up front, and can be raised or lowered") {
  const std::string path = write_temp(R"(name: ops
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 1ms, backward_input: 2ms}
schedules: [1f1b]
)");
  CHECK(run("run '" + path + "'").code == 0);
  Result r = run("run '" + path + "' --max-ops 50 --stream off");
  CHECK(r.code == 2);
  CHECK(r.err.find(
            "1f1b: 4 stages x 8 microbatches need at least 64 ops, more than the limit of 50") !=
        std::string::npos);
  CHECK(run("table '" + path + "' --schedule 1f1b --max-ops 50").code == 2);
  // By default (--stream auto) a 1f1b table over the limit is replayed from its order stream.
  Result streamed = run("run '" + path + "' --max-ops 50");
  CHECK(streamed.code == 0);
  CHECK(streamed.err.find("note: 1f1b has 64 ops, more than --max-ops (50): replayed from its "
                          "order stream") != std::string::npos);
  CHECK(run("run '" + path + "' --max-ops 64").code == 0);
  fs::remove(path);
}

TEST_CASE("a makespan past 64-bit picoseconds is refused at the key that makes it long") {
  Result r = run("run tests/errors/time_overflow_simulation.yaml");
  CHECK(r.code == 2);
  CHECK(r.err.rfind("tests/errors/time_overflow_simulation.yaml:3:", 0) == 0);
  CHECK(r.err.find("pipeline.microbatches: 2 iterations x 100000 microbatches") !=
        std::string::npos);
  CHECK(r.err.find("64-bit picosecond clock") != std::string::npos);
}

TEST_CASE("outputs are whole or absent: killing the process mid-write never leaves a torn file") {
  const fs::path dir = fs::temp_directory_path() / (fmt_name() + "_kill");
  fs::create_directories(dir);
  // A sweep streams its CSV into OUT.partial and renames it at the end; kill it at several
  // moments.
  const std::string old_content = "old file\n";
  int replaced = 0;
  for (const char* delay : {"0.05", "0.2", "0.5", "1", "2"}) {
    const fs::path out = dir / "sweep.csv";
    std::ofstream(out) << old_content;
    shell(std::string("timeout -s KILL ") + delay + " '" + BUBBLESIM_BINARY +
          "' sweep scenarios/sweeps/example.yaml --jobs 2 -o '" + out.string() + "'");
    const std::string text = slurp(out.string());
    CAPTURE(delay);
    if (text == old_content) continue;
    ++replaced;
    CHECK(text.rfind("# bubblesim sweep fingerprint=", 0) == 0);  // a complete file: header ...
    CHECK(text.back() == '\n');                                   // ... and whole rows
  }
  // A finished run replaces the file and leaves no temporary file behind.
  const fs::path out = dir / "sweep.csv";
  Result done = run("sweep scenarios/sweeps/example.yaml --jobs 2 -o '" + out.string() + "'");
  CHECK(done.code == 0);
  CHECK(slurp(out.string()).rfind("# bubblesim sweep fingerprint=", 0) == 0);
  CHECK_FALSE(fs::exists(out.string() + ".partial"));  // the killed runs' partial file is replaced
  // The HTML report: killed or not, the file is the old one or ends with the closing tag.
  const fs::path html = dir / "report.html";
  for (const char* delay : {"0.05", "0.3"}) {
    std::ofstream(html) << old_content;
    shell(std::string("timeout -s KILL ") + delay + " '" + BUBBLESIM_BINARY +
          "' run scenarios/quickstart.yaml --html '" + html.string() + "'");
    const std::string text = slurp(html.string());
    CHECK((text == old_content || text.find("</html>") != std::string::npos));
  }
  // Killed runs may leave their own temporary file; remove them, then a normal run leaves none.
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
  }
  CHECK(run("run scenarios/quickstart.yaml --html '" + html.string() + "' --trace '" +
            (dir / "t.json").string() + "' -o '" + (dir / "r.txt").string() + "'")
            .code == 0);
  CHECK(run("table scenarios/quickstart.yaml --schedule 1f1b --format csv -o '" +
            (dir / "t.csv").string() + "'")
            .code == 0);
  CHECK(temp_files_in(dir) == 0);
  CHECK(slurp(html.string()).find("</html>") != std::string::npos);
  INFO("sweeps replaced before the kill: " << replaced);
  fs::remove_all(dir);
}

TEST_CASE("run --html-max-ops aggregates a report over the bound and says so on the page") {
  const fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  const std::string full = (dir / "full.html").string(), small = (dir / "small.html").string();
  // quickstart: two schedules of 384 ops each (within the default bound: every op embedded).
  REQUIRE(run("run scenarios/quickstart.yaml -q --html '" + full + "'").code == 0);
  REQUIRE(run("run scenarios/quickstart.yaml -q --html '" + small + "' --html-max-ops 100").code ==
          0);
  CHECK(slurp(full).find("timeline aggregated") == std::string::npos);
  const std::string page = slurp(small);
  CHECK(page.find("<p class=\"aggregated\">gpipe: timeline aggregated: ") != std::string::npos);
  CHECK(page.find("<p class=\"aggregated\">1f1b: timeline aggregated: ") != std::string::npos);
  CHECK(run("run scenarios/quickstart.yaml --html '" + small + "' --html-max-ops -1").code != 0);
  fs::remove_all(dir);
}
