#include "sim/units/csv_records.h"

namespace bubblesim {

std::string_view CsvRecord::text() const {
  std::string_view t = raw;
  if (!t.empty() && t.back() == '\n') t.remove_suffix(1);
  if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
  return t;
}

CsvReader::CsvReader(std::string_view text, CsvComments comments)
    : text_(text), comments_(comments) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
}

std::optional<CsvRecord> CsvReader::next() {
  if (pos_ >= text_.size()) return std::nullopt;
  CsvRecord r;
  const std::size_t begin = pos_;
  r.line = line_;
  auto column = [&](std::size_t at) { return static_cast<int>(at - line_start_) + 1; };
  if (comments_ == CsvComments::Hash) {
    const std::size_t first = text_.find_first_not_of(" \t", pos_);
    if (first != std::string_view::npos && text_[first] == '#') {
      const std::size_t nl = text_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
      r.raw = text_.substr(begin, pos_ - begin);
      r.comment = true;
      r.terminated = nl != std::string_view::npos;
      ++line_;
      line_start_ = pos_;
      return r;
    }
  }
  while (true) {
    CsvField f;
    const std::size_t field_begin = pos_;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      f.quoted = true;
      ++pos_;
      f.line = line_;
      f.column = column(pos_);
      const std::size_t value_begin = pos_;
      std::string unescaped;
      bool doubled = false;
      r.quotes_closed = false;
      while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c == '"' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          unescaped += '"';
          doubled = true;
          pos_ += 2;
          continue;
        }
        if (c == '"') {
          r.quotes_closed = true;
          break;
        }
        if (c == '\n') {
          ++line_;
          line_start_ = pos_ + 1;
        }
        unescaped += c;
        ++pos_;
      }
      if (doubled) {
        r.unescaped_.push_back(std::move(unescaped));
        f.value = r.unescaped_.back();
      } else {
        f.value = text_.substr(value_begin, pos_ - value_begin);
      }
      if (r.quotes_closed) ++pos_;  // the closing quote
      // Text after the closing quote up to the separator belongs to the field as written
      // (`"a"b` is read as a); readers that care compare `raw`.
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n') ++pos_;
    } else {
      f.line = line_;
      f.column = column(pos_);
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n') ++pos_;
      f.value = text_.substr(field_begin, pos_ - field_begin);
      if (!f.value.empty() && f.value.back() == '\r' &&
          (pos_ >= text_.size() || text_[pos_] == '\n'))
        f.value.remove_suffix(1);
    }
    f.raw = text_.substr(field_begin, pos_ - field_begin);
    if (!f.raw.empty() && f.raw.back() == '\r' && (pos_ >= text_.size() || text_[pos_] == '\n'))
      f.raw.remove_suffix(1);
    r.fields.push_back(f);
    if (pos_ >= text_.size()) break;
    if (text_[pos_] == ',') {
      ++pos_;
      continue;
    }
    // a newline ends the record
    ++pos_;
    ++line_;
    line_start_ = pos_;
    r.terminated = true;
    break;
  }
  r.raw = text_.substr(begin, pos_ - begin);
  return r;
}

}  // namespace bubblesim
