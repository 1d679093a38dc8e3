// Sweeps stream their CSV: the bytes a sweep writes (measured by the kernel, /proc/PID/io wchar),
// kill -9 at seeded random points of its progress then --resume giving the uninterrupted file byte
// for byte, and --resume repairing (torn, duplicated, stale rows) or refusing (another sweep's
// file) what it finds.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Starts `bubblesim sweep SPEC -o OUT EXTRA...` in the source folder, output discarded.
pid_t start_sweep(const std::string& spec, const std::string& out,
                  const std::vector<std::string>& extra) {
  std::vector<std::string> args{BUBBLESIM_BINARY, "sweep", spec, "-o", out};
  args.insert(args.end(), extra.begin(), extra.end());
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(BUBBLESIM_SOURCE_DIR) != 0) ::_exit(127);
    std::FILE* null = std::freopen("/dev/null", "w", stderr);
    (void)null;
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits for `pid`; its exit code and the bytes it wrote (the kernel's count, read from
// /proc/PID/io while the exited process is still a zombie).
std::pair<int, std::uint64_t> wait_with_wchar(pid_t pid) {
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0);
  std::uint64_t wchar = 0;
  std::ifstream io("/proc/" + std::to_string(pid) + "/io");
  for (std::string key; io >> key;) {
    if (key == "wchar:") io >> wchar;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, wchar};
}

// Runs a sweep and kills it with SIGKILL once its partial file holds `bytes` (a moment measured
// in the sweep's own progress, not in wall time, so a loaded machine moves it nowhere). Returns
// whether the kill landed before the sweep ended by itself.
bool kill_at_size(const std::string& spec, const std::string& out, std::uintmax_t bytes,
                  const std::vector<std::string>& extra) {
  pid_t pid = start_sweep(spec, out, extra);
  const std::string partial = out + ".partial";  // `out` is an absolute path in a TempDir
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    std::error_code error;
    const std::uintmax_t size = fs::file_size(partial, error);
    if (!error && size >= bytes) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status);
}

}  // namespace

TEST_CASE("a sweep of 20000 points writes less than twice its file") {
  TempDir dir;
  const std::string out = dir.file("many.csv");
  auto [code, wchar] =
      wait_with_wchar(start_sweep("tests/cli/sweep_stream/many.yaml", out, {"--jobs", "2"}));
  REQUIRE(code == 0);
  const auto size = static_cast<std::uint64_t>(fs::file_size(out));
  const std::string text = slurp(out);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2 + 20000);
  INFO("wrote " << wchar << " bytes for a file of " << size);
  CHECK(wchar >= size);
  CHECK(wchar < 2 * size);
  CHECK_FALSE(fs::exists(out + ".partial"));
}

TEST_CASE(
    "kill -9 at seeded random points of its progress, then --resume: the uninterrupted file, byte "
    "for byte") {
  TempDir dir;
  const std::string spec = "tests/cli/sweep_stream/medium.yaml", full = dir.file("full.csv");
  REQUIRE(run("sweep " + spec + " --jobs 2 -o " + full).code == 0);
  const std::string whole = slurp(full);
  const auto size = static_cast<double>(whole.size());
  std::mt19937 random(22);  // fixed seed: the same moments (as fractions of the file) every time
  std::uniform_real_distribution<double> fraction(0.05, 0.9);
  int interrupted = 0;
  for (int round = 0; round < 3; ++round) {
    const std::string out = dir.file("killed" + std::to_string(round) + ".csv");
    CAPTURE(round);
    // Killed once fresh and once while resuming (further on), then resumed to the end.
    const double first = fraction(random), second = first + fraction(random) * (1.0 - first);
    interrupted +=
        kill_at_size(spec, out, static_cast<std::uintmax_t>(first * size), {"--jobs", "2"}) &&
        fs::exists(out + ".partial") && !fs::exists(out);
    kill_at_size(spec, out, static_cast<std::uintmax_t>(second * size),
                 {"--jobs", "2", "--resume"});
    Result r = run("sweep " + spec + " --jobs 2 --resume -o " + out);
    REQUIRE(r.code == 0);
    CHECK(slurp(out) == whole);
    CHECK_FALSE(fs::exists(out + ".partial"));
  }
  CHECK(interrupted == 3);  // every first kill landed while the sweep ran
}

TEST_CASE("--resume repairs torn, duplicated, short and stale rows and refuses another sweep's") {
  TempDir dir;
  const std::string spec = "scenarios/sweeps/example.yaml", full = dir.file("full.csv");
  REQUIRE(run("sweep " + spec + " --jobs 2 -o " + full).code == 0);
  const std::string whole = slurp(full);
  // Line k (0-based) of the file, with its newline, and the offset where it starts.
  auto line_start = [&](int k) {
    std::size_t at = 0;
    for (int i = 0; i < k; ++i) at = whole.find('\n', at) + 1;
    return at;
  };
  auto line = [&](int k) { return whole.substr(line_start(k), line_start(k + 1) - line_start(k)); };
  const std::size_t row = line_start(100);
  struct Case {
    const char* name;
    std::string text;
    const char* note;
  };
  std::string stale = line(100);
  stale.replace(stale.find(',', stale.find(',') + 1) + 1, 1, "9");  // pipeline.stages 9...
  std::string short_row = line(100);
  short_row.erase(short_row.rfind(','));
  short_row += "\n";
  const std::vector<Case> repairs{
      {"torn", whole.substr(0, row + 17), "is torn"},
      {"duplicated", whole.substr(0, line_start(101)) + line(100) + whole.substr(line_start(101)),
       "a duplicated, missing or foreign row"},
      {"missing", whole.substr(0, row) + whole.substr(line_start(101)),
       "a duplicated, missing or foreign row"},
      {"stale", whole.substr(0, row) + stale + whole.substr(line_start(101)), "stale axis values"},
      {"short", whole.substr(0, row) + short_row + whole.substr(line_start(101)), "fields"},
  };
  for (const Case& c : repairs) {
    for (const char* where : {"", ".partial"}) {
      CAPTURE(c.name);
      CAPTURE(where);
      const std::string out = dir.file(std::string(c.name) + ".csv");
      write(out + where, c.text);
      Result r = run("sweep " + spec + " --jobs 2 --resume -o " + out);
      CHECK(r.code == 0);
      CHECK(r.err.find(c.note) != std::string::npos);
      CHECK(slurp(out) == whole);
      CHECK_FALSE(fs::exists(out + ".partial"));
    }
  }
  // Another sweep's file, or one without a fingerprint line: refused, left as it was.
  std::string other = whole;
  other.replace(other.find("fingerprint=") + 12, 4, "0000");
  const std::vector<std::pair<std::string, std::string>> refusals{
      {other, "was written by a different sweep"},
      {whole.substr(whole.find('\n') + 1), "does not start with a sweep fingerprint line"},
  };
  for (const auto& [text, message] : refusals) {
    const std::string out = dir.file("refused.csv");
    write(out, text);
    Result r = run("sweep " + spec + " --jobs 2 --resume -o " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(slurp(out) == text);
  }
  // --max-ops decides which points are invalid rows: it is part of the fingerprint.
  Result r = run("sweep " + spec + " --jobs 2 --resume --max-ops 1000 -o " + full);
  CHECK(r.code == 2);
  CHECK(r.err.find("--max-ops") != std::string::npos);
}

TEST_CASE("a sweep writes a symlink's target, keeps its mode and refuses a second writer") {
  TempDir dir;
  const std::string spec = "scenarios/sweeps/example.yaml";
  const std::string target = dir.file("target.csv"), link = dir.file("link.csv");
  write(target, "old\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(target, link);
  REQUIRE(run("sweep " + spec + " --jobs 2 -o " + link).code == 0);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(target).rfind("# bubblesim sweep fingerprint=", 0) == 0);
  CHECK(fs::status(target).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  // Another sweep holds the output (its lock on the partial file): refused, nothing changed.
  const std::string before = slurp(target);
  int held = ::open((target + ".partial").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);
  Result r = run("sweep " + spec + " --jobs 2 -o " + link);
  ::close(held);
  CHECK(r.code == 2);
  CHECK(r.err.find("another sweep is writing") != std::string::npos);
  CHECK(slurp(target) == before);
  // Paths that are not files: exit 2 with the path named, before any point runs.
  for (const std::string& out : {std::string(), dir.path.string(), dir.file("no/such.csv")}) {
    Result bad = run("sweep " + spec + " --jobs 2 -o '" + out + "'");
    CAPTURE(out);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("'" + out + "'") != std::string::npos);
  }
}
