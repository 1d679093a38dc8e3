#pragma once
// Checking a sweep CSV before --resume continues it: the fingerprint line and the header must be
// this sweep's (else InputError, exit 2), and the rows are read in order while each is a whole
// record (ends in a newline, the header's field count), is the next row of the shard's point
// order (no duplicates, no gaps) and carries that point's axis values. The longest such prefix of
// whole points is kept; the first row that fails, everything after it and the last point read
// (whose rows may be cut short) are recomputed.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

/// A shard's points in file order, first, first + step, ...: held as three numbers, not a list
/// (a sweep of 10^7 points).
struct ShardPoints {
  std::int64_t first = 0, step = 1, count = 0;
  ShardPoints() = default;
  ShardPoints(std::int64_t first_point, std::int64_t step_between, std::int64_t points)
      : first(first_point), step(step_between), count(points) {}
  /// From a list in arithmetic progression (std::invalid_argument otherwise).
  ShardPoints(const std::vector<std::int64_t>& points);  // NOLINT: lists convert
  ShardPoints(std::initializer_list<std::int64_t> points)
      : ShardPoints(std::vector<std::int64_t>(points)) {}
  std::int64_t operator[](std::size_t k) const {
    return first + static_cast<std::int64_t>(k) * step;
  }
  std::size_t size() const { return static_cast<std::size_t>(count); }
};

struct ResumeExpectation {
  std::string fingerprint_line;                         // the first line, with its newline
  std::string header;                                   // the second, with its newline
  ShardPoints points;                                   // the shard's points in file order
  std::function<std::string(std::int64_t)> axis_cells;  // ",v1,v2": a point's axis cells
};

struct ResumeCheck {
  std::size_t keep_bytes = 0;   // the verified prefix: both first lines and whole points
  std::size_t points_kept = 0;  // points[0 .. points_kept) are in it
  std::int64_t rows_kept = 0;
  std::string problem;  // why rows after the prefix are recomputed; empty when none failed
};

/// `file` names the text in messages.
ResumeCheck check_resume(std::string_view text, const ResumeExpectation& expect,
                         const std::string& file);

/// The same check fed the file piece by piece, holding only the record being read: a sweep's
/// CSV of 10^7 points is gigabytes.
class ResumeScan {
 public:
  ResumeScan(const ResumeExpectation& expect, std::string file);
  ~ResumeScan();
  /// The next bytes of the file. Returns false once the rest cannot change the verdict.
  bool feed(std::string_view bytes);
  /// After the last bytes.
  ResumeCheck finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace bubblesim
