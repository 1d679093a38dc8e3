// Sweeps through the real binary: row counts, sharding + merge byte-identical to one run,
// and --resume after an interrupted run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli_support.h"

using namespace bubblesim::cli_testing;
namespace fs = std::filesystem;

namespace {

std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST_CASE("a sweep of over 1000 rows, sharded in 2 and 3, merges to the unsharded file") {
  TempDir dir;
  Result all = run("sweep scenarios/sweeps/large.yaml --jobs 2 -o " + dir.file("all.csv"));
  REQUIRE(all.code == 0);
  std::string whole = slurp(dir.file("all.csv"));
  CHECK(count_lines(whole) == 2 + 1024 * 2);  // fingerprint, header, rows
  for (int shards : {2, 3}) {
    std::string parts;
    for (int i = 0; i < shards; ++i) {
      std::string part =
          dir.file("part" + std::to_string(shards) + "_" + std::to_string(i) + ".csv");
      Result r = run("sweep scenarios/sweeps/large.yaml --jobs 2 --shard " + std::to_string(i) +
                     "/" + std::to_string(shards) + " -o " + part);
      REQUIRE(r.code == 0);
      parts += " " + part;
    }
    std::string merged = dir.file("merged" + std::to_string(shards) + ".csv");
    Result m = run("merge -o " + merged + parts);
    REQUIRE(m.code == 0);
    CHECK(slurp(merged) == whole);
  }
  // The shard outputs name their shard: a missing, repeated or foreign shard is refused.
  auto part = [&](int shards, int i) {
    return " " + dir.file("part" + std::to_string(shards) + "_" + std::to_string(i) + ".csv");
  };
  const std::pair<std::string, std::string> refused[] = {
      {part(3, 0) + part(3, 1), "shard 2/3 is missing from the parts"},
      {part(3, 0) + part(3, 1) + part(3, 2) + part(3, 1), "shard 1/3 is given twice"},
      {part(2, 0) + part(3, 1) + part(3, 2), "is one of 2 shards"},
      {" " + dir.file("all.csv") + part(2, 1), "is a shard output and"},
  };
  for (const auto& [parts, message] : refused) {
    Result r = run("merge -o " + dir.file("bad.csv") + parts);
    CAPTURE(parts);
    CHECK(r.code == 2);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

TEST_CASE("an interrupted sweep resumes to the same final file") {
  TempDir dir;
  std::string full = dir.file("full.csv"), resumed = dir.file("resumed.csv");
  REQUIRE(run("sweep scenarios/sweeps/example.yaml --jobs 1 -o " + full).code == 0);
  // Kill a run partway (SIGKILL: no chance to clean up), then resume.
  std::string cmd = "timeout -s KILL 0.3 " + std::string(BUBBLESIM_BINARY) + " sweep " +
                    source("scenarios/sweeps/example.yaml") + " --jobs 1 -o " + resumed +
                    " >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
  if (fs::exists(resumed)) {
    std::string partial = slurp(resumed);
    CHECK(partial.rfind(slurp(full).substr(0, slurp(full).find('\n') + 1), 0) ==
          0);                                            // header intact
    CHECK((partial.empty() || partial.back() == '\n'));  // no torn row
  }
  Result r = run("sweep scenarios/sweeps/example.yaml --jobs 2 --resume -o " + resumed);
  REQUIRE(r.code == 0);
  CHECK(slurp(resumed) == slurp(full));
}

TEST_CASE("sweep input errors") {
  TempDir dir;
  Result r = run("sweep scenarios/sweeps/example.yaml --shard 3/2 -o " + dir.file("x.csv"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--shard: '3/2' needs 0 <= I < N") != std::string::npos);
  Result m = run("merge -o " + dir.file("m.csv") + " " + dir.file("missing.csv"));
  CHECK(m.code == 2);
}
