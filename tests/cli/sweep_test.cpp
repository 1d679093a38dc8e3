// Sweeps through the real binary: row counts, sharding + merge byte-identical to one run,
// and --resume after an interrupted run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
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

TEST_CASE("a sweep at a fixed GPU count: constraints keep the layouts that use all 16 GPUs") {
  TempDir dir;
  Result r = run("sweep scenarios/sweeps/fixed_gpus.yaml --jobs 2 -o " + dir.file("l.csv"));
  REQUIRE(r.code == 0);
  const std::string csv = slurp(dir.file("l.csv"));
  // Every row's tp x stages x dp is 16: of the 4 x 3 x 5 product, tp 1 (pp 1, 2, 4 with dp 16,
  // 8, 4), tp 2 (8, 4, 2), tp 4 (4, 2, 1), tp 8 (pp 1, 2 with dp 2, 1) are the 11 points.
  std::size_t rows = 0, points = 0;
  std::size_t at = csv.find('\n', csv.find("point,entry")) + 1;
  while (at < csv.size()) {
    const std::size_t end = csv.find('\n', at);
    const std::string row = csv.substr(at, end - at);
    at = end + 1;
    int point = 0, entry = 0, tp = 0, pp = 0, dp = 0;
    REQUIRE(std::sscanf(row.c_str(), "%d,%d,%d,%d,%d", &point, &entry, &tp, &pp, &dp) == 5);
    CHECK(tp * pp * dp == 16);
    ++rows;
    if (entry == 0) ++points;
  }
  CHECK(points == 11);
  CHECK(rows == 21);  // two schedules a point, one row for the point that does not fit
  CHECK(r.err.find("11 points") != std::string::npos);
}

TEST_CASE("sweep input errors") {
  TempDir dir;
  Result r = run("sweep scenarios/sweeps/example.yaml --shard 3/2 -o " + dir.file("x.csv"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--shard: '3/2' needs 0 <= I < N") != std::string::npos);
  Result m = run("merge -o " + dir.file("m.csv") + " " + dir.file("missing.csv"));
  CHECK(m.code == 2);
}

TEST_CASE("--resume keeps no row computed from a file that changed since (a topology file)") {
  // The fingerprint covered the sweep file and its base only: after the base's topology file
  // changed, --resume kept the old rows under the same fingerprint (54.8 ms where a fresh run
  // gives 3,994.7 ms). It now covers every file the points read, also one only a later point
  // reads (an axis over topology files).
  TempDir dir;
  const std::string fast = slurp(source("scenarios/topologies/two-gpus.yaml"));
  std::string slow = fast;
  slow.replace(slow.find("bandwidth: 50GB/s"), 17, "bandwidth: 1MB/s");
  REQUIRE(slow != fast);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
  };
  write("tg.yaml", fast);
  write("tg2.yaml", fast);
  write("base.yaml",
        "name: t\npipeline: {stages: 2, microbatches: 4}\n"
        "costs: {forward: 1ms, backward_input: 2ms, p2p_bytes: 1MB}\n"
        "communication: {model: topology}\ntopology: tg.yaml\nschedules: [1f1b]\n");
  write("first.yaml", "base: base.yaml\naxes:\n  pipeline.microbatches: [4, 8]\n");
  write("later.yaml", "base: base.yaml\naxes:\n  topology: [tg.yaml, tg2.yaml]\n");
  for (const auto& [sweep, changed] :
       {std::pair<std::string, std::string>{"first.yaml", "tg.yaml"}, {"later.yaml", "tg2.yaml"}}) {
    CAPTURE(sweep);
    write("tg.yaml", fast);
    write("tg2.yaml", fast);
    const std::string out = dir.file(sweep + ".csv");
    REQUIRE(run("sweep " + dir.file(sweep) + " --jobs 1 -o " + out).code == 0);
    const std::string before = slurp(out);
    write(changed, slow);
    Result resumed = run("sweep " + dir.file(sweep) + " --jobs 1 --resume -o " + out);
    CAPTURE(resumed.err);
    CHECK(resumed.code == 2);
    CHECK(resumed.err.find("was written by a different sweep") != std::string::npos);
    CHECK(slurp(out) == before);  // refused, left as it was
    REQUIRE(run("sweep " + dir.file(sweep) + " --jobs 1 -o " + out).code == 0);
    const std::string fresh = slurp(out);
    CHECK(fresh.substr(0, fresh.find('\n')) != before.substr(0, before.find('\n')));
    CHECK(fresh.substr(fresh.find('\n')) != before.substr(before.find('\n')));  // other rows
    // Unchanged inputs: --resume keeps the finished file as it is.
    Result again = run("sweep " + dir.file(sweep) + " --jobs 1 --resume -o " + out);
    CHECK(again.code == 0);
    CHECK(slurp(out) == fresh);
  }
}
