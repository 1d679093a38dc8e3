// A disk that fills while an output is written, through the real binary: every write is exit 2
// naming the path, an existing output keeps its old content, nothing half-written or temporary
// is left beside it (except the sweep's resume file), and once there is room again `--resume`
// finishes the sweep byte-identical to a run that never failed.
//
// Two disks that fill: a file-size limit (RLIMIT_FSIZE with SIGXFSZ ignored, so a write fails
// mid-file with EFBIG; works everywhere), and a real 8 KiB tmpfs (ENOSPC; needs root with
// CAP_SYS_ADMIN, otherwise that half is skipped with a message).
#include <doctest/doctest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kOldReport = "old report\n";

// The folder outputs go to, and what must come before each command for that folder to be full.
struct FullDisk {
  std::string name;
  std::string folder;
  std::string prefix;  // shell text run before the binary
};

std::vector<std::string> listing(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void clear(const std::string& folder) {
  for (const auto& entry : fs::directory_iterator(folder)) fs::remove_all(entry.path());
}

// A table CSV larger than either disk (a few hundred KiB).
std::string write_big_scenario(const TempDir& dir) {
  const std::string path = dir.file("big.yaml");
  std::ofstream(path) << "name: big\npipeline: {stages: 8, microbatches: 64}\n"
                         "costs: {forward: 1ms, backward_input: 2ms}\nschedules: [1f1b]\n";
  return path;
}

void check_failed_write(const Result& r, const std::string& path) {
  CAPTURE(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("'" + path) != std::string::npos);
  CHECK(r.err.find("terminate") == std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
}

void check_outputs_on(const FullDisk& disk, const TempDir& roomy) {
  CAPTURE(disk.name);
  const std::string& d = disk.folder;
  const std::string big = write_big_scenario(roomy);

  clear(d);
  std::ofstream(d + "/out.json") << kOldReport;
  check_failed_write(
      run("run scenarios/quickstart.yaml --format json -o '" + d + "/out.json'", disk.prefix),
      d + "/out.json");
  CHECK(slurp(d + "/out.json") == kOldReport);
  CHECK(listing(d) == std::vector<std::string>{"out.json"});

  for (const std::string& option : {"--html '" + d + "/r.html'", "--trace '" + d + "/t.json'"}) {
    clear(d);
    CAPTURE(option);
    check_failed_write(run("run scenarios/quickstart.yaml " + option, disk.prefix), d + "/");
    CHECK(listing(d).empty());
  }

  clear(d);
  check_failed_write(
      run("table '" + big + "' --schedule 1f1b --format csv -o '" + d + "/t.csv'", disk.prefix),
      d + "/t.csv");
  CHECK(listing(d).empty());

  // The sweep leaves only its resume file; with room again, --resume completes it exactly.
  clear(d);
  check_failed_write(run("sweep scenarios/sweeps/example.yaml -o '" + d + "/s.csv'", disk.prefix),
                     d + "/s.csv");
  REQUIRE(listing(d) == std::vector<std::string>{"s.csv.partial"});
  fs::copy_file(d + "/s.csv.partial", roomy.file("s.csv.partial"),
                fs::copy_options::overwrite_existing);
  const Result resumed =
      run("sweep scenarios/sweeps/example.yaml --resume -o '" + roomy.file("s.csv") + "'");
  CAPTURE(resumed.err);
  REQUIRE(resumed.code == 0);
  const Result whole = run("sweep scenarios/sweeps/example.yaml -o '" + roomy.file("w.csv") + "'");
  REQUIRE(whole.code == 0);
  CHECK(slurp(roomy.file("s.csv")) == slurp(roomy.file("w.csv")));
  CHECK(!fs::exists(roomy.file("s.csv.partial")));
  clear(d);
}

}  // namespace

TEST_CASE("a file-size limit hit mid-write: exit 2 naming the output, old content kept") {
  TempDir full, roomy;
  // dash counts 512-byte blocks, bash 1024: either way far below every output written here.
  check_outputs_on({"RLIMIT_FSIZE", full.path.string(), "trap '' XFSZ; ulimit -f 8;"}, roomy);
}

TEST_CASE("a full file system (8 KiB tmpfs): exit 2 naming the output, old content kept") {
  TempDir mount_point, roomy;
  if (::geteuid() != 0 ||
      ::mount("tmpfs", mount_point.path.c_str(), "tmpfs", 0, "size=8k,mode=0755") != 0) {
    MESSAGE("skipped: mounting a tmpfs needs root with CAP_SYS_ADMIN");
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount(path.c_str()); }
  } unmount{mount_point.path.string()};
  check_outputs_on({"tmpfs", mount_point.path.string(), ""}, roomy);
}
