#pragma once
// Splitting one line of a simple CSV file (no quoting) into its fields and their 1-based
// character columns, so readers can report errors at FILE:LINE:COLUMN of the offending cell.

#include <string_view>
#include <vector>

namespace bubblesim {

struct CsvFields {
  std::vector<std::string_view> values;  // views into the line
  std::vector<int> columns;              // 1-based column where each value starts
};

/// Fields separated by ',' (an empty line is one empty field).
inline CsvFields split_csv_fields(std::string_view line) {
  CsvFields out;
  std::size_t begin = 0;
  while (true) {
    std::size_t comma = line.find(',', begin);
    out.values.push_back(line.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    out.columns.push_back(static_cast<int>(begin) + 1);
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

}  // namespace bubblesim
