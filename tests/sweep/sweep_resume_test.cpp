// The --resume check on its own (sim/sweep/sweep_resume.h): which prefix of a sweep CSV it
// keeps, for quoted fields holding commas, quotes and newlines, a sharded point order, and what it
// refuses.
#include "sim/sweep/sweep_resume.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/units/diagnostics.h"

using bubblesim::check_resume;
using bubblesim::ResumeCheck;
using bubblesim::ResumeExpectation;

namespace {

// Shard 1/3 of a sweep of 9 points with one axis whose labels hold a comma.
ResumeExpectation shard_expectation() {
  return {"# bubblesim sweep fingerprint=00000000000000ff shard=1/3\n",
          "point,entry,axis,status,error\n",
          {1, 4, 7},
          [](std::int64_t p) { return ",\"a," + std::to_string(p) + "\""; }};
}

const std::string kStart =
    "# bubblesim sweep fingerprint=00000000000000ff shard=1/3\npoint,entry,axis,status,error\n";
const std::string kPoint1 = "1,0,\"a,1\",ok,\n1,1,\"a,1\",invalid,\"a \"\"quoted\"\",\nline\"\n";
const std::string kPoint4 = "4,0,\"a,4\",ok,\n4,1,\"a,4\",ok,\n";
const std::string kPoint7 = "7,0,\"a,7\",ok,\n";

}  // namespace

TEST_CASE("resume keeps whole points before the last one read, quoted newlines included") {
  ResumeCheck all = check_resume(kStart + kPoint1 + kPoint4 + kPoint7, shard_expectation(), "f");
  CHECK(all.problem.empty());
  CHECK(all.points_kept == 2);  // point 7 may have been cut short: recomputed
  CHECK(all.rows_kept == 4);
  CHECK(all.keep_bytes == kStart.size() + kPoint1.size() + kPoint4.size());

  ResumeCheck torn =
      check_resume(kStart + kPoint1 + kPoint4.substr(0, 20), shard_expectation(), "f");
  // Line 4 ends inside quotes (row 1,1 spans lines 4-5); point 4's first row is line 6.
  CHECK(torn.problem.find("line 7 is torn") != std::string::npos);
  CHECK(torn.points_kept == 1);  // point 1 is whole: the next point started
  CHECK(torn.keep_bytes == kStart.size() + kPoint1.size());

  ResumeCheck header_only = check_resume(kStart.substr(0, 30), shard_expectation(), "f");
  CHECK(header_only.keep_bytes == 0);  // killed while writing the first lines: start over
}

TEST_CASE("resume stops at a row of another shard, a stale axis value or a short row") {
  const std::string foreign = "2,0,\"a,2\",ok,\n";
  ResumeCheck other = check_resume(kStart + kPoint1 + foreign + kPoint4, shard_expectation(), "f");
  CHECK(other.problem.find("is point 2 entry 0 where point 1 entry 2 belongs") !=
        std::string::npos);
  CHECK(other.points_kept == 0);

  ResumeCheck stale =
      check_resume(kStart + kPoint1 + "4,0,\"a,5\",ok,\n" + kPoint7, shard_expectation(), "f");
  CHECK(stale.problem.find("stale axis values for point 4") != std::string::npos);
  CHECK(stale.points_kept == 1);  // point 1 is whole: the next point started

  ResumeCheck short_row = check_resume(kStart + "1,0,\"a,1\",ok\n", shard_expectation(), "f");
  CHECK(short_row.problem.find("has 4 fields, the header 5") != std::string::npos);
}

TEST_CASE("resume refuses another sweep's or shard's file, and a file without a fingerprint") {
  std::string other_shard = kStart;
  other_shard.replace(other_shard.find("1/3"), 3, "0/3");
  CHECK_THROWS_WITH_AS(check_resume(other_shard + kPoint1, shard_expectation(), "f.csv"),
                       doctest::Contains("'f.csv' was written by a different sweep"),
                       bubblesim::InputError);
  CHECK_THROWS_WITH_AS(
      check_resume("point,entry,axis,status,error\n" + kPoint1, shard_expectation(), "f.csv"),
      doctest::Contains("does not start with a sweep fingerprint line"), bubblesim::InputError);
  std::string header = kStart;
  header.replace(header.find("axis"), 4, "other");
  CHECK_THROWS_WITH_AS(check_resume(header + kPoint1, shard_expectation(), "f.csv"),
                       doctest::Contains("line 2 is not this sweep's CSV header"),
                       bubblesim::InputError);
}

TEST_CASE("resume read piece by piece keeps what the whole file keeps") {
  // --resume reads the old file in pieces (a sweep's CSV is gigabytes): every cut of every text
  // above, fed one piece at a time, gives the verdict of the whole text.
  const std::string foreign = "2,0,\"a,2\",ok,\n";
  for (const std::string& text :
       {kStart + kPoint1 + kPoint4 + kPoint7, kStart + kPoint1 + kPoint4.substr(0, 20),
        kStart.substr(0, 30), kStart + kPoint1 + foreign + kPoint4,
        kStart + kPoint1 + "4,0,\"a,5\",ok,\n" + kPoint7}) {
    const ResumeCheck whole = check_resume(text, shard_expectation(), "f");
    for (std::size_t piece = 1; piece <= text.size(); ++piece) {
      bubblesim::ResumeScan scan(shard_expectation(), "f");
      for (std::size_t at = 0; at < text.size(); at += piece)
        if (!scan.feed(std::string_view(text).substr(at, piece))) break;
      const ResumeCheck parts = scan.finish();
      CAPTURE(piece);
      CHECK(parts.keep_bytes == whole.keep_bytes);
      CHECK(parts.points_kept == whole.points_kept);
      CHECK(parts.rows_kept == whole.rows_kept);
      CHECK(parts.problem == whole.problem);
    }
  }
}

TEST_CASE("a shard's points are three numbers, from a list or a stride") {
  const bubblesim::ShardPoints listed({1, 4, 7});
  CHECK(listed.size() == 3);
  CHECK(listed[2] == 7);
  const bubblesim::ShardPoints strided(1, 3, 3);
  CHECK(strided[1] == listed[1]);
  CHECK_THROWS_AS(bubblesim::ShardPoints({1, 4, 8}), std::invalid_argument);
}
