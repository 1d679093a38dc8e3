#pragma once
// Splitting a CSV file into lines, and one line of a simple CSV file (no quoting) into its fields
// and their 1-based character columns, so readers can report errors at FILE:LINE:COLUMN of the
// offending cell.

#include <string_view>
#include <vector>

namespace bubblesim {

struct CsvFields {
  std::vector<std::string_view> values;  // views into the line
  std::vector<int> columns;              // 1-based column where each value starts
};

/// The lines of `text` (line k + 1 is element k), without their '\n' or "\r\n"; text ending in a
/// newline gives an empty last line. A UTF-8 byte-order mark at the start (spreadsheet programs
/// write one) is not part of the first line.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) return lines;
    start = nl + 1;
  }
}

/// Fields separated by ',' (an empty line is one empty field).
inline CsvFields split_csv_fields(std::string_view line) {
  CsvFields out;
  std::size_t begin = 0;
  while (true) {
    std::size_t comma = line.find(',', begin);
    out.values.push_back(line.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    out.columns.push_back(static_cast<int>(begin) + 1);
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

}  // namespace bubblesim
