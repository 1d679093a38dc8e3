#include "sim/sweep/sweep_resume.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "sim/units/csv_records.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

constexpr std::string_view kFingerprintPrefix = "# bubblesim sweep fingerprint=";

std::string first_line(std::string_view text) {
  return std::string(text.substr(0, std::min(text.find('\n'), std::size_t{80})));
}

// Refuses a file whose first two lines are not `expect`'s.
void check_first_lines(std::string_view text, const ResumeExpectation& expect,
                       const std::string& file) {
  const std::string again = "; remove it or run without --resume to start over";
  if (text.rfind(expect.fingerprint_line, 0) != 0) {
    const std::string line = first_line(text);
    if (line.rfind(kFingerprintPrefix, 0) == 0) {
      throw InputError(fmt::format(
          "--resume: '{}' was written by a different sweep ('{}', this sweep's is '{}'): the "
          "sweep file, its base scenario, a file its points read (topology, profile, table), a "
          "plugin, --max-ops, --shard or the bubblesim version differ{}",
          file, line, first_line(expect.fingerprint_line), again));
    }
    throw InputError(fmt::format(
        "--resume: '{}' does not start with a sweep fingerprint line ('{}'; written by an older "
        "bubblesim or another program){}",
        file, line, again));
  }
  if (text.substr(expect.fingerprint_line.size()).rfind(expect.header, 0) != 0) {
    throw InputError(
        fmt::format("--resume: '{}' line 2 is not this sweep's CSV header{}", file, again));
  }
}

// Why `r` is not row `entry` of point `points[k]` (or row 0 of the next point); empty when it is.
// Fields are compared as written (quotes kept): the sweep writes them the same way each time.
std::string row_problem(const CsvRecord& r, const ResumeExpectation& expect, std::size_t k,
                        std::int64_t entry, std::size_t columns) {
  if (r.fields.size() != columns)
    return fmt::format("has {} fields, the header {}", r.fields.size(), columns);
  const std::string point = std::to_string(expect.points[k]);
  if (r.fields[0].raw != point || r.fields[1].raw != std::to_string(entry)) {
    return fmt::format(
        "is point {} entry {} where point {} entry {} belongs (a duplicated, "
        "missing or foreign row)",
        r.fields[0].raw, r.fields[1].raw, point, entry);
  }
  // The axis cells exactly as this sweep writes them, then the next field's comma (labels may
  // hold quoted commas, so the text is compared, not a count of fields).
  const std::string want = expect.axis_cells(expect.points[k]);
  const char* start = r.fields[1].raw.data() + r.fields[1].raw.size();  // the comma after it
  const std::string_view after_entry(start,
                                     static_cast<std::size_t>(r.raw.data() + r.raw.size() - start));
  if (after_entry.substr(0, want.size()) != want || after_entry.substr(want.size(), 1) != ",") {
    return fmt::format("has stale axis values for point {} ('{}', the sweep has '{}')", point,
                       after_entry.substr(1, want.empty() ? 0 : want.size() - 1),
                       std::string_view(want).substr(want.empty() ? 0 : 1));
  }
  return "";
}

}  // namespace

ResumeCheck check_resume(std::string_view text, const ResumeExpectation& expect,
                         const std::string& file) {
  ResumeCheck check;
  const std::string start = expect.fingerprint_line + expect.header;
  if (start.rfind(text, 0) == 0) return check;  // empty, or killed while writing the header
  check_first_lines(text, expect, file);
  const std::size_t columns = CsvReader(expect.header).next()->fields.size();
  const std::size_t rows_begin = start.size();
  std::size_t point_start = rows_begin, k = 0;
  std::int64_t entry = 0, rows_in_point = 0;
  const int first_row_line = 3;  // after the fingerprint and the header
  CsvReader reader(text.substr(rows_begin));
  while (true) {
    const std::size_t pos = rows_begin + reader.offset();
    std::optional<CsvRecord> r = reader.next();
    if (!r) break;
    const int line = first_row_line + r->line - 1;
    if (!r->terminated) {
      check.problem = fmt::format("line {} is torn (no newline at its end)", line);
      break;
    }
    // A row 0 of the next point closes the current one.
    if (entry > 0 && k + 1 < expect.points.size() && r->fields.size() > 1 &&
        r->fields[0].raw == std::to_string(expect.points[k + 1]) && r->fields[1].raw == "0") {
      ++k;
      entry = 0;
      point_start = pos;
      check.rows_kept += rows_in_point;
      rows_in_point = 0;
    }
    std::string problem = k < expect.points.size() ? row_problem(*r, expect, k, entry, columns)
                                                   : std::string("is beyond the sweep's points");
    if (!problem.empty()) {
      check.problem = fmt::format("line {} {}", line, problem);
      break;
    }
    ++entry;
    ++rows_in_point;
  }
  check.keep_bytes = point_start;
  check.points_kept = k;
  return check;
}

}  // namespace bubblesim
