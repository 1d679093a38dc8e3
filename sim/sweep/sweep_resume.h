#pragma once
// Checking a sweep CSV before --resume continues it: the fingerprint line and the header must be
// this sweep's (else InputError, exit 2), and the rows are read in order while each is a whole
// record (ends in a newline, the header's field count), is the next row of the shard's point
// order (no duplicates, no gaps) and carries that point's axis values. The longest such prefix of
// whole points is kept; the first row that fails, everything after it and the last point read
// (whose rows may be cut short) are recomputed.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

struct ResumeExpectation {
  std::string fingerprint_line;                         // the first line, with its newline
  std::string header;                                   // the second, with its newline
  std::vector<std::int64_t> points;                     // the shard's points in file order
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

}  // namespace bubblesim
