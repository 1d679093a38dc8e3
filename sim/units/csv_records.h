#pragma once
// Reading CSV text record by record (RFC 4180): fields separated by ',', records by '\n' or
// "\r\n", a field in double quotes may hold commas, newlines and "" for one quote. Every CSV
// reader of bubblesim (schedule tables, PyTorch schedules, measured profiles, sweep results and
// their resume check) reads through it, so they agree on quoting, byte-order marks and line
// endings, and each reports problems at FILE:LINE:COLUMN of the cell. Fields are views into the
// text; only a quoted field holding "" is copied (into its record).

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

struct CsvField {
  std::string_view value;  // quotes removed, "" read as one quote
  std::string_view raw;    // as written, quotes kept
  int line = 0;            // 1-based line and column of the value's first character
  int column = 0;          // (inside the quotes of a quoted field)
  bool quoted = false;
};

struct CsvRecord {
  CsvRecord() = default;
  // Fields may view the record's own copies of unescaped values: a copy would view the original's.
  CsvRecord(const CsvRecord&) = delete;
  CsvRecord& operator=(const CsvRecord&) = delete;
  CsvRecord(CsvRecord&&) noexcept = default;  // a deque's move keeps its elements in place
  CsvRecord& operator=(CsvRecord&&) noexcept = default;

  std::vector<CsvField> fields;  // a blank line is one empty field
  std::string_view raw;          // the record as written, its newline included when it has one
  int line = 0;                  // 1-based line of its first character
  /// False when the text ended inside a quoted field (the record is torn or the quote unclosed).
  bool quotes_closed = true;
  /// False when the text ended before the record's newline.
  bool terminated = false;
  /// A comment line (CsvComments::Hash): `fields` is empty and the line is not split.
  bool comment = false;

  /// The record's text without its line ending.
  std::string_view text() const;

 private:
  friend class CsvReader;
  std::deque<std::string> unescaped_;  // the values of quoted fields that held ""
};

/// Whether a line whose first character other than blanks is '#' is a comment, read whole
/// without splitting or quoting (bubblesim's table and profile files), or an ordinary record.
enum class CsvComments { None, Hash };

class CsvReader {
 public:
  /// A UTF-8 byte-order mark at the start of `text` (spreadsheet programs write one) is skipped.
  explicit CsvReader(std::string_view text, CsvComments comments = CsvComments::None);
  /// The next record, nullopt at the end of the text.
  std::optional<CsvRecord> next();
  /// The byte offset in `text` where the next record starts.
  std::size_t offset() const { return pos_; }

 private:
  std::string_view text_;
  CsvComments comments_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;  // offset of the current line's first character
  int line_ = 1;
};

}  // namespace bubblesim
