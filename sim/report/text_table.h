#pragma once
// Text layout for terminal output: aligned tables that fit a width (TextTable), numbered
// footnotes for notes too long for a cell (Footnotes), word wrapping, and collapsing rows that
// differ only in a counted name ("device 0-7").

#include <algorithm>
#include <string>
#include <vector>

namespace bubblesim {

class TextTable {
 public:
  /// Headings and cells are text a terminal shows: each is written with its control characters,
  /// newlines included, as \xHH (a user's name cannot drive the terminal or start a row).
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> row);
  /// The first column is left-aligned, the rest right-aligned unless marked here.
  void align_left(std::size_t column) { left_.push_back(column); }
  /// How many leading columns every block repeats when the table splits (default 1).
  void repeat_leading(std::size_t columns) { leading_ = std::max<std::size_t>(1, columns); }
  /// Fits `width` characters per line (0: no limit): first headings wider than their cells wrap
  /// onto two lines at a space, then the widest left-aligned column after the first wraps its
  /// cells (down to 16 characters), then columns that still do not fit continue in a further
  /// block that repeats the first column. In the wrapped column a word wider than the column breaks
  /// after a comma or parenthesis (else at the width); elsewhere a single word wider than `width`
  /// stays whole.
  std::string render(std::size_t width = 0) const;
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> left_;
  std::size_t leading_ = 1;
};

/// Notes numbered in order of first use; the same text gets the same number.
class Footnotes {
 public:
  /// "[n]" for `note`.
  std::string ref(const std::string& note);
  bool empty() const { return notes_.empty(); }
  /// "[1] text" lines, wrapped to `width` with the text indented under its first word.
  std::string render(std::size_t width) const;

 private:
  std::vector<std::string> notes_;
};

/// `text` wrapped at spaces to lines of at most `width` characters (a longer word stays whole);
/// every line after the first starts with `indent` spaces. Ends with a newline. A line of free
/// text: its control characters, newlines included, are written as \xHH (the text report's rule
/// for every string that came from a user).
std::string wrap_text(const std::string& text, std::size_t width, std::size_t indent = 0);

/// `text` with every line longer than `width` broken at spaces (a word longer than a line is cut)
/// so that no line is longer; lines that fit are kept as they are (their spacing too). A broken
/// line continues under its description column: after the first gap of two spaces that follows
/// its first word (help and option lists), else two spaces deeper than it starts. For text that
/// was not laid out for a width (errors, `--help`, `list --presets`, `explain`).
std::string fit_lines(const std::string& text, std::size_t width);

/// Merges consecutive rows that are equal except in `column`, where their cells are one name
/// whose first number counts up: "tp all-reduce stage 0 (per op)" .. "stage 7 (per op)" ->
/// "tp all-reduce stage 0-7 (per op)", "0" .. "7" -> "0-7". Other rows are kept as they are.
std::vector<std::vector<std::string>> collapse_numbered_rows(
    const std::vector<std::vector<std::string>>& rows, std::size_t column);

}  // namespace bubblesim
