// Output files through the real binary: a write that fails is exit 2 naming the path (never an
// abort from a worker thread); an output onto an input is refused before anything runs; symlinks
// are followed, modes kept, devices refused, a second writer fails on the lock; inputs that are
// not regular files are refused, and the scenario may come from standard input or a pipe.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_support.h"
#include "schedules/builtin_generators.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

// Root writes into a read-only folder anyway: run the binary as nobody then (util-linux's
// setpriv); false when that is needed but not installed (the case is skipped).
std::string unprivileged() {
  return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
}
// As root the unprivileged cases run as nobody, which needs setpriv and a checkout and binary
// that nobody can reach (a clone inside a private temporary folder is not: then they are skipped).
bool can_run_unprivileged() {
  if (::geteuid() != 0) return true;
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) return false;
  const std::string reach = "cd '" + std::string(BUBBLESIM_SOURCE_DIR) + "' 2>/dev/null && " +
                            unprivileged() + " sh -c 'test -x \"" + BUBBLESIM_BINARY +
                            "\" && test -r scenarios/sweeps/example.yaml' 2>/dev/null";
  return std::system(reach.c_str()) == 0;
}

}  // namespace

TEST_CASE("every sweep write failure is exit 2 naming the path") {
  TempDir dir;
  fs::permissions(dir.path, fs::perms::all);  // nobody may enter; made read-only below
  const std::string readonly_dir = dir.file("ro");
  fs::create_directories(readonly_dir);
  fs::permissions(readonly_dir, fs::perms::owner_read | fs::perms::owner_exec |
                                    fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  struct Case {
    std::string output, env;
  };
  const Case cases[] = {{"", ""},
                        {dir.file("no/such/folder/x.csv"), ""},
                        {readonly_dir + "/x.csv", unprivileged()},
                        {"/proc/x", ""}};
  for (const Case& c : cases) {
    if (!c.env.empty() && !can_run_unprivileged()) continue;
    CAPTURE(c.output);
    for (const char* jobs : {"1", "2"}) {
      Result r = run("sweep scenarios/sweeps/example.yaml --jobs " + std::string(jobs) + " -o '" +
                         c.output + "'",
                     c.env);
      CAPTURE(r.err);
      CHECK(r.code == 2);
      CHECK(r.err.find("'" + c.output + "'") != std::string::npos);
    }
  }
}

TEST_CASE("a write failing while the sweep's workers run stops them and throws, never aborts") {
  // The CLI refuses these outputs before running (above); run_sweep itself must also end cleanly
  // when a write fails mid-sweep (a full disk): its workers are stopped and joined first.
  const bubblesim::Registry registry = bubblesim::builtin_registry();
  const bubblesim::SweepSpec spec = bubblesim::load_sweep(source("scenarios/sweeps/example.yaml"));
  for (const char* output : {"/proc/x", "/nonexistent-folder/x.csv"}) {
    for (int jobs : {1, 4}) {
      bubblesim::SweepOptions options;
      options.output = output;
      options.jobs = jobs;
      CHECK_THROWS_AS(bubblesim::run_sweep(spec, registry, options), bubblesim::InputError);
    }
  }
}

namespace {

constexpr const char* kScenario = R"(name: small
pipeline: {stages: 2, microbatches: 4}
costs: {forward: 1ms, backward_input: 2ms}
schedules: [1f1b]
)";

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("-o, --html, --trace and table -o onto an input are refused, the file unchanged") {
  TempDir dir;
  const std::string s = dir.file("s.yaml");
  write_text(s, kScenario);
  for (const std::string& args :
       {"run " + s + " -o " + s, "run " + s + " --html " + s, "run " + s + " --trace " + s,
        "table " + s + " --schedule 1f1b -o " + s,
        "run " + s + " -o " + dir.path.string() + "/./s.yaml"}) {
    CAPTURE(args);
    Result r = run(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("an input of this run") != std::string::npos);
    CHECK(slurp(s) == kScenario);
  }
  // Through a symlink to the input, too.
  fs::create_symlink(s, dir.file("link.yaml"));
  Result r = run("run " + s + " -o " + dir.file("link.yaml"));
  CHECK(r.code == 2);
  CHECK(slurp(s) == kScenario);
}

TEST_CASE("sweep -o onto its spec or its base is refused before any point runs") {
  TempDir dir;
  const std::string spec = dir.file("sweep.yaml"), base = dir.file("base.yaml");
  fs::copy_file(source("scenarios/sweeps/example.yaml"), spec);
  fs::copy_file(source("scenarios/sweeps/base.yaml"), base);
  for (const std::string& out : {spec, base}) {
    const std::string before = slurp(out);
    Result r = run("sweep " + spec + " --jobs 1 -o " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("an input of this run") != std::string::npos);
    CHECK(slurp(out) == before);
  }
}

TEST_CASE("sweep -o onto a file its points read (the base's topology) is refused, kept intact") {
  // The topology is read only when a point loads: it was overwritten by the finished CSV.
  TempDir dir;
  const std::string topology = dir.file("tg.yaml"), other = dir.file("tg2.yaml");
  fs::copy_file(source("scenarios/topologies/two-gpus.yaml"), topology);
  fs::copy_file(topology, other);
  write_text(dir.file("base.yaml"),
             "name: t\npipeline: {stages: 2, microbatches: 4}\n"
             "costs: {forward: 1ms, backward_input: 2ms, p2p_bytes: 1MB}\n"
             "communication: {model: topology}\ntopology: tg.yaml\n");
  write_text(dir.file("first.yaml"), "base: base.yaml\naxes:\n  pipeline.microbatches: [4, 8]\n");
  // An axis over topology files: the second is read only by the second point, after the run began.
  write_text(dir.file("later.yaml"), "base: base.yaml\naxes:\n  topology: [tg.yaml, tg2.yaml]\n");
  const std::string before = slurp(topology);
  for (const auto& [sweep, out] :
       {std::pair{dir.file("first.yaml"), topology}, std::pair{dir.file("later.yaml"), other}}) {
    CAPTURE(sweep);
    Result r = run("sweep " + sweep + " --jobs 1 -o " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("an input of this run") != std::string::npos);
    CHECK(slurp(out) == before);
  }
}

TEST_CASE("-o onto a symlink writes its target; an existing file keeps its mode") {
  TempDir dir;
  const std::string s = dir.file("s.yaml"), target = dir.file("target.txt");
  write_text(s, kScenario);
  write_text(target, "old\n");
  ::chmod(target.c_str(), 0600);
  fs::create_symlink("target.txt", dir.file("link.txt"));  // relative, as ln -s makes them
  Result r = run("run " + s + " --format csv -o " + dir.file("link.txt"));
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(dir.file("link.txt")));
  CHECK(slurp(target).rfind("scenario,schedule", 0) == 0);  // the CSV report
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  // No temporary or lock file is left beside it.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 3);
}

TEST_CASE("a device or a folder as -o is refused; '-' is standard output") {
  TempDir dir;
  const std::string s = dir.file("s.yaml");
  write_text(s, kScenario);
  Result dev = run("run " + s + " -o /dev/null");
  CHECK(dev.code == 2);
  CHECK(dev.err.find("cannot write '/dev/null': it is a device") != std::string::npos);
  Result folder = run("run " + s + " -o " + dir.path.string());
  CHECK(folder.code == 2);
  CHECK(folder.err.find("it is a folder") != std::string::npos);
  Result out = run("run " + s + " --format csv -o -");
  CHECK(out.code == 0);
  CHECK(out.out.rfind("scenario,schedule", 0) == 0);
}

TEST_CASE("standard output carries one output: a second onto it is refused, nothing written") {
  TempDir dir;
  const std::string s = dir.file("s.yaml");
  std::string two = kScenario;
  two.replace(two.find("[1f1b]"), 6, "[gpipe, 1f1b]");
  write_text(s, two);
  for (const std::string args : {"--html -", "--html - -o -", "--trace - --trace-combined"}) {
    CAPTURE(args);
    Result r = run("run " + s + " " + args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("would both go to standard output") != std::string::npos);
  }
  // One trace per schedule cannot be '-' (it wrote files named "-.gpipe" and "-.1f1b").
  Result per_schedule = run("run " + s + " --trace - -o " + dir.file("r.txt"));
  CHECK(per_schedule.code == 2);
  CHECK(per_schedule.err.find("add --trace-combined or name a file") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.file("r.txt")));
  // One output on '-' is fine: the trace of the one schedule named, the page with -o FILE.
  Result one = run("run " + s + " --schedule 1f1b --trace - -q -o " + dir.file("r.txt"));
  CHECK(one.code == 0);
  CHECK(one.out.rfind("{\"displayTimeUnit\"", 0) == 0);
  Result page = run("run " + s + " --html - -q -o " + dir.file("r.txt"));
  CHECK(page.code == 0);
  CHECK(page.out.rfind("<!DOCTYPE html>", 0) == 0);
}

TEST_CASE("a second writer of the same output fails clearly on the lock") {
  TempDir dir;
  const std::string s = dir.file("s.yaml"), out = dir.file("out.txt");
  write_text(s, kScenario);
  const std::string lock = dir.file(".out.txt.lock");
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);  // as another bubblesim writing out.txt would
  Result r = run("run " + s + " -o " + out);
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write '" + out + "': another process is writing it") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
  ::close(fd);
  CHECK(run("run " + s + " -o " + out).code == 0);
}

TEST_CASE("a terminal's signals during a sweep leave no temporary or lock file") {
  // SIGHUP (the terminal closed), SIGINT (Ctrl-C), SIGTERM: each removes the temporary and lock
  // files before it ends the process; only out.csv.partial, which --resume continues, may stay.
  // (SIGQUIT is handled alike; its default action dumps core, which a test should not.)
  for (const char* signal : {"HUP", "INT", "TERM"}) {
    CAPTURE(signal);
    TempDir dir;
    const std::string out = dir.file("out.csv");
    const std::string cmd = "cd '" + std::string(BUBBLESIM_SOURCE_DIR) + "' && timeout -s " +
                            signal + " 0.3 '" + BUBBLESIM_BINARY +
                            "' sweep tests/cli/sweep_stream/medium.yaml --jobs 2 -o " + out +
                            " >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
    for (const auto& e : fs::directory_iterator(dir.path)) {
      CAPTURE(e.path());
      CHECK((e.path().filename() == "out.csv" || e.path().filename() == "out.csv.partial"));
    }
  }
}

TEST_CASE("SIGTERM during a sweep leaves no temporary or lock file, only what --resume continues") {
  TempDir dir;
  const std::string out = dir.file("out.csv");
  // 10,000 points (about a second): the signal lands while rows stream into out.csv.partial.
  const std::string sweep = "' sweep tests/cli/sweep_stream/medium.yaml --jobs 2 -o " + out;
  const std::string cmd = "cd '" + std::string(BUBBLESIM_SOURCE_DIR) +
                          "' && timeout -s TERM 0.3 '" + BUBBLESIM_BINARY + sweep +
                          " >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
  for (const auto& e : fs::directory_iterator(dir.path)) {
    CAPTURE(e.path());
    CHECK((e.path().filename() == "out.csv" || e.path().filename() == "out.csv.partial"));
  }
  CHECK(run("sweep tests/cli/sweep_stream/medium.yaml --jobs 2 --resume -o " + out).code == 0);
  for (const auto& e : fs::directory_iterator(dir.path)) {
    CAPTURE(e.path());
    CHECK(e.path().filename() == "out.csv");
  }
}

TEST_CASE("inputs that are not regular files are refused at once; the scenario may be a stream") {
  TempDir dir;
  const std::string s = dir.file("s.yaml"), fifo = dir.file("fifo");
  write_text(s, kScenario);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string topo_yaml = dir.file("topo.yaml");
  write_text(topo_yaml, std::string(kScenario) + "topology: fifo\n");
  for (const std::string& args :
       {"run " + topo_yaml, "sweep " + fifo + " -o " + dir.file("x.csv")}) {
    CAPTURE(args);
    Result r = run(args, "timeout 20");
    CHECK(r.code == 2);
    CHECK(r.err.find(fifo + ": error: is a FIFO (pipe), not a regular file") != std::string::npos);
  }
  // The scenario may be a pipe: a FIFO without a writer reads as empty instead of blocking.
  Result empty = run("run " + fifo, "timeout 20");
  CHECK(empty.code == 2);
  CHECK(empty.err.find(fifo + ": error: the file is empty") != std::string::npos);
  Result folder = run("run " + dir.path.string());
  CHECK(folder.code == 2);
  CHECK(folder.err.find("is a folder, not a file") != std::string::npos);
  for (const std::string stream : {"-", "/dev/stdin"}) {
    CAPTURE(stream);
    Result r = run("run " + stream + " --format csv < " + s);
    CHECK(r.code == 0);
    CHECK(r.out.find("1f1b") != std::string::npos);
    Result piped = run("run " + stream + " --format csv", "cat " + s + " |");
    CHECK(piped.code == 0);
    CHECK(piped.out.find("1f1b") != std::string::npos);
  }
}

TEST_CASE("more worker threads than the process limit allows: fewer threads, not an abort") {
  // Needs a user with few processes (nobody, through setpriv as root).
  if (::geteuid() != 0 || !can_run_unprivileged()) return;
  TempDir dir;
  fs::permissions(dir.path, fs::perms::all);
  const std::string limited = unprivileged() + " bash -c 'ulimit -u 8; exec \"$0\" \"$@\"'";
  Result sweep =
      run("sweep scenarios/sweeps/example.yaml --jobs 200 -o " + dir.file("x.csv"), limited);
  CAPTURE(sweep.err);
  CHECK(sweep.code == 0);
  const std::string s = dir.file("mc.yaml");
  write_text(s, std::string(kScenario) + "variability: {cv: 0.1, samples: 64}\n");
  Result mc = run("run " + s + " --threads 64", limited);
  CAPTURE(mc.err);
  CHECK(mc.code == 0);
}

TEST_CASE("merge -o onto a part, and two outputs onto one file, are refused") {
  TempDir dir;
  const std::string part = dir.file("part.csv"), s = dir.file("s.yaml");
  REQUIRE(run("sweep scenarios/sweeps/example.yaml --jobs 2 -o " + part).code == 0);
  const std::string before = slurp(part);
  Result merge = run("merge -o " + part + " " + part);
  CHECK(merge.code == 2);
  CHECK(merge.err.find("cannot write '" + part + "': it is an input of this run") !=
        std::string::npos);
  CHECK(slurp(part) == before);
  Result device = run("merge -o " + dir.file("m.csv") + " /dev/zero");
  CHECK(device.code == 2);
  CHECK(device.err.find("/dev/zero: is a device, not a regular file") != std::string::npos);
  write_text(s, kScenario);
  Result twice =
      run("run " + s + " -o " + dir.file("r.txt") + " --html " + dir.path.string() + "/./r.txt");
  CHECK(twice.code == 2);
  CHECK(twice.err.find("it is also the output '" + dir.file("r.txt") + "' of this run") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("r.txt")));
}

TEST_CASE(
    "a per-schedule trace named like another output or an input is refused, nothing written") {
  // --trace t.json with two schedules writes t.gpipe.json and t.1f1b.json: one of them was the
  // --html page (or the report), overwritten in silence after the page was written.
  TempDir dir;
  const std::string s = dir.file("s.yaml");
  write_text(s,
             "name: two\npipeline: {stages: 2, microbatches: 4}\n"
             "costs: {forward: 1ms, backward_input: 2ms}\nschedules: [gpipe, 1f1b]\n");
  for (const std::string& flag : {"--html", "-o"}) {
    CAPTURE(flag);
    Result r = run("run " + s + " --trace " + dir.file("t.json") + " " + flag + " " +
                   dir.file("t.1f1b.json"));
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("cannot write '" + dir.file("t.1f1b.json") + "': it is also the output") !=
          std::string::npos);
    for (const char* name : {"t.json", "t.gpipe.json", "t.1f1b.json"})
      CHECK_FALSE(fs::exists(dir.file(name)));
  }
  // A per-schedule trace onto the scenario itself.
  const std::string input = dir.file("x.1f1b.yaml");
  fs::copy_file(s, input);
  Result r = run("run " + input + " --trace " + dir.file("x.yaml"));
  CHECK(r.code == 2);
  CHECK(r.err.find("an input of this run") != std::string::npos);
  CHECK(slurp(input) == slurp(s));
  CHECK_FALSE(fs::exists(dir.file("x.gpipe.yaml")));
  // Outputs that do not collide: the run writes both traces and the page.
  CHECK(
      run("run " + s + " --trace " + dir.file("ok.json") + " --html " + dir.file("ok.html")).code ==
      0);
  CHECK(fs::exists(dir.file("ok.gpipe.json")));
  CHECK(fs::exists(dir.file("ok.1f1b.json")));
}
