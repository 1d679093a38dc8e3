#include "sim/report/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

constexpr std::size_t kGap = 2;          // spaces between columns
constexpr std::size_t kMinWrapped = 16;  // narrowest a wrapped text column gets

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  if (out.empty()) out.emplace_back();
  return out;
}

/// A cell wrapped to `width`: at spaces, and a word longer than the width after its last ',' or
/// '(' that fits ("optimized(" / "offload=true," / "recompute=true)"), else cut at the width.
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width) {
  std::vector<std::string> out;
  for (std::string line : split_lines(wrap_text(text, width))) {
    while (width > 0 && line.size() > width) {
      std::size_t cut = line.find_last_of(",(", width - 1);
      cut = cut == std::string::npos || cut == 0 ? width : cut + 1;
      out.push_back(line.substr(0, cut));
      line = line.substr(cut);
    }
    out.push_back(line);
  }
  return out;
}

/// A heading as one or two lines: split at the space that makes the longer line shortest.
std::vector<std::string> split_heading(const std::string& heading) {
  std::optional<std::size_t> best;
  std::size_t best_width = heading.size();
  for (std::size_t i = 0; i < heading.size(); ++i) {
    if (heading[i] != ' ') continue;
    const std::size_t w = std::max(i, heading.size() - i - 1);
    if (w < best_width) {
      best_width = w;
      best = i;
    }
  }
  if (!best) return {heading};
  return {heading.substr(0, *best), heading.substr(*best + 1)};
}

struct Layout {
  std::vector<std::vector<std::string>> heading_lines;  // per column, 1 or 2 lines
  std::vector<std::size_t> width;
};

Layout measure(const std::vector<std::string>& header,
               const std::vector<std::vector<std::string>>& rows, bool wrap_headings) {
  Layout l;
  l.width.assign(header.size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < l.width.size(); ++c)
      l.width[c] = std::max(l.width[c], r[c].size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    std::vector<std::string> lines{header[c]};
    if (wrap_headings && header[c].size() > l.width[c]) lines = split_heading(header[c]);
    for (const std::string& line : lines) l.width[c] = std::max(l.width[c], line.size());
    l.heading_lines.push_back(lines);
  }
  return l;
}

std::size_t total_width(const Layout& l, const std::vector<std::size_t>& columns) {
  std::size_t total = 0;
  for (std::size_t c : columns) total += l.width[c];
  return total + kGap * (columns.empty() ? 0 : columns.size() - 1);
}

/// A name split at its first number: "tp all-reduce stage " 3 " (per F or B op)".
struct NumberedName {
  std::string prefix;
  long number = 0;
  std::string suffix;
};

std::optional<NumberedName> numbered_name(const std::string& s) {
  const std::size_t start = s.find_first_of("0123456789");
  if (start == std::string::npos) return std::nullopt;
  std::size_t end = start;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) != 0) ++end;
  if (end - start > 9) return std::nullopt;
  // Only the first number counts; a later one ("stage 3 of 8") is part of the suffix.
  return NumberedName{s.substr(0, start), std::stol(s.substr(start, end - start)), s.substr(end)};
}

bool same_apart_from(const std::vector<std::string>& a, const std::vector<std::string>& b,
                     std::size_t column) {
  if (a.size() != b.size()) return false;
  for (std::size_t c = 0; c < a.size(); ++c)
    if (c != column && a[c] != b[c]) return false;
  return true;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {
  for (std::string& h : header_) h = visible_controls(h);
}

void TextTable::add_row(std::vector<std::string> row) {
  for (std::string& cell : row) cell = visible_controls(cell);
  rows_.push_back(std::move(row));
}

std::string TextTable::render(std::size_t width) const {
  std::vector<std::size_t> all(header_.size());
  for (std::size_t c = 0; c < all.size(); ++c) all[c] = c;
  Layout layout = measure(header_, rows_, false);
  if (width > 0 && total_width(layout, all) > width) layout = measure(header_, rows_, true);
  auto left = [&](std::size_t c) {
    return c == 0 || std::find(left_.begin(), left_.end(), c) != left_.end();
  };
  // Still too wide: the widest left-aligned text column (not the first) wraps its cells, down to
  // kMinWrapped characters, before columns move to another block.
  std::optional<std::size_t> wrapped;
  if (width > 0 && total_width(layout, all) > width) {
    for (std::size_t c = 1; c < header_.size(); ++c)
      if (left(c) && (!wrapped || layout.width[c] > layout.width[*wrapped])) wrapped = c;
    if (wrapped) {
      const std::size_t excess = total_width(layout, all) - width;
      std::size_t floor = kMinWrapped;
      for (const std::string& h : layout.heading_lines[*wrapped]) floor = std::max(floor, h.size());
      layout.width[*wrapped] =
          std::max(floor, layout.width[*wrapped] - std::min(excess, layout.width[*wrapped]));
    }
  }

  // Blocks of columns that fit, each led by the leading columns.
  const std::size_t lead = std::min(leading_, header_.size());
  std::vector<std::size_t> leading(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lead));
  std::vector<std::vector<std::size_t>> blocks{leading};
  for (std::size_t c = lead; c < header_.size(); ++c) {
    std::vector<std::size_t> grown = blocks.back();
    grown.push_back(c);
    if (width > 0 && blocks.back().size() > lead && total_width(layout, grown) > width) {
      blocks.push_back(leading);
      blocks.back().push_back(c);
    } else {
      blocks.back() = grown;
    }
  }

  auto line = [&](const std::vector<std::size_t>& columns, auto cell_of) {
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::size_t c = columns[i];
      const std::string cell = cell_of(c);
      const std::string pad(layout.width[c] - std::min(layout.width[c], cell.size()), ' ');
      if (i > 0) out += std::string(kGap, ' ');
      out += left(c) ? cell + pad : pad + cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::vector<std::size_t>& columns = blocks[b];
    if (b > 0) out += "\n";
    std::size_t heading_rows = 1;
    for (std::size_t c : columns)
      heading_rows = std::max(heading_rows, layout.heading_lines[c].size());
    for (std::size_t h = 0; h < heading_rows; ++h) {
      // Headings sit on the bottom line; a two-line heading starts on the line above.
      out += line(columns, [&](std::size_t c) {
        const auto& lines = layout.heading_lines[c];
        const std::size_t first = heading_rows - lines.size();
        return h >= first ? lines[h - first] : std::string();
      });
    }
    out += std::string(total_width(layout, columns), '-') + "\n";
    for (const auto& r : rows_) {
      // A wrapped cell may take several lines; the other cells sit on the first.
      std::vector<std::string> parts{""};
      if (wrapped && *wrapped < r.size()) {
        parts = wrap_cell(r[*wrapped], layout.width[*wrapped]);
      }
      for (std::size_t k = 0; k < parts.size(); ++k) {
        out += line(columns, [&](std::size_t c) {
          if (wrapped && c == *wrapped) return parts[k];
          return k == 0 && c < r.size() ? r[c] : std::string();
        });
      }
    }
  }
  return out;
}

std::string Footnotes::ref(const std::string& note) {
  auto it = std::find(notes_.begin(), notes_.end(), note);
  if (it == notes_.end()) {
    notes_.push_back(note);
    it = notes_.end() - 1;
  }
  return fmt::format("[{}]", it - notes_.begin() + 1);
}

std::string Footnotes::render(std::size_t width) const {
  std::string out;
  for (std::size_t i = 0; i < notes_.size(); ++i) {
    const std::string mark = fmt::format("[{}] ", i + 1);
    out += wrap_text(mark + notes_[i], width, mark.size());
  }
  return out;
}

std::string wrap_text(const std::string& raw, std::size_t width, std::size_t indent) {
  const std::string text = visible_controls(raw);
  // The first line keeps the text's leading spaces.
  std::size_t at = std::min(text.find_first_not_of(' '), text.size());
  std::string out, line(at, ' ');
  auto flush = [&] {
    out += line + "\n";
    line = std::string(indent, ' ');
  };
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    const bool line_empty = line.find_first_not_of(' ') == std::string::npos;
    if (!line_empty && width > 0 && line.size() + 1 + word.size() > width) flush();
    if (line.find_first_not_of(' ') != std::string::npos) line += " ";
    line += word;
  }
  if (line.find_first_not_of(' ') != std::string::npos || out.empty()) out += line + "\n";
  return out;
}

namespace {

/// Where a broken line continues: under the text after its first two-space gap that follows a
/// word, or two spaces deeper than the line starts; at most half the width.
std::size_t continuation_indent(const std::string& line, std::size_t width) {
  const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
  std::size_t indent = lead + 2;
  const std::size_t gap = line.find("  ", lead);
  if (gap != std::string::npos) {
    const std::size_t text = line.find_first_not_of(' ', gap);
    if (text != std::string::npos) indent = text;
  }
  return std::min(indent, width / 2);
}

}  // namespace

std::string fit_lines(const std::string& text, std::size_t width) {
  if (width == 0) return text;
  std::string out;
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t end = text.find('\n', from);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    std::string line = text.substr(from, end - from);
    from = end + 1;
    const std::string indent(continuation_indent(line, width), ' ');
    while (line.size() > width) {
      // The last space that leaves the line within the width and some text on it.
      std::size_t cut = line.find_last_of(' ', width);
      const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
      if (cut == std::string::npos || cut <= lead || cut <= indent.size()) cut = width;
      std::string head = line.substr(0, cut);
      head.erase(head.find_last_not_of(' ') + 1);
      out += head + "\n";
      std::string rest = line.substr(cut);
      rest.erase(0, std::min(rest.find_first_not_of(' '), rest.size()));
      line = indent + rest;
    }
    out += line;
    if (!last) out += "\n";
    if (last) break;
  }
  return out;
}

std::vector<std::vector<std::string>> collapse_numbered_rows(
    const std::vector<std::vector<std::string>>& rows, std::size_t column) {
  std::vector<std::vector<std::string>> out;
  std::size_t i = 0;
  while (i < rows.size()) {
    std::size_t j = i + 1;
    std::optional<NumberedName> first = numbered_name(rows[i].at(column));
    if (first) {
      long next = first->number + 1;
      while (j < rows.size() && same_apart_from(rows[i], rows[j], column)) {
        std::optional<NumberedName> n = numbered_name(rows[j].at(column));
        if (!n || n->prefix != first->prefix || n->suffix != first->suffix || n->number != next)
          break;
        ++j;
        ++next;
      }
      if (j - i > 1) {
        std::vector<std::string> merged = rows[i];
        merged[column] =
            fmt::format("{}{}-{}{}", first->prefix, first->number, next - 1, first->suffix);
        out.push_back(merged);
        i = j;
        continue;
      }
    }
    out.push_back(rows[i]);
    i = j;
  }
  return out;
}

}  // namespace bubblesim
