#include "sim/units/yaml_document_checks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <vector>

#include "sim/units/utf8.h"

namespace bubblesim {
namespace {

// 1-based line and column of byte `offset`.
SourceLocation location_at(const std::string& text, std::size_t offset, const std::string& file) {
  const auto begin = text.begin();
  const auto at = begin + static_cast<std::ptrdiff_t>(offset);
  const int line = 1 + static_cast<int>(std::count(begin, at, '\n'));
  const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const std::size_t column =
      line_start == std::string::npos || offset == 0 ? offset : offset - line_start - 1;
  return SourceLocation{file, line, static_cast<int>(column) + 1};
}

// The second "---" line that starts a document after content, for a second document whose node
// has no position (an empty one).
std::optional<SourceLocation> second_marker(const std::string& text, const std::string& file) {
  bool content = false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const bool marker = line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ');
    if (marker && content) return location_at(text, start, file);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (!marker && first != std::string::npos && line[first] != '#') content = true;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<SourceLocation> find_nul_byte(const std::string& text, const std::string& file) {
  const std::size_t at = text.find('\0');
  if (at == std::string::npos) return std::nullopt;
  return location_at(text, at, file);
}

std::optional<InvalidUtf8> find_invalid_utf8(const std::string& text, const std::string& file) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      return InvalidUtf8{location_at(text, i, file), static_cast<unsigned char>(text[i])};
    }
    i += length;
  }
  return std::nullopt;
}

std::optional<SourceLocation> find_second_document(const std::string& text,
                                                   const std::string& file) {
  // Only a "---" or "..." line can separate documents: skip the second parse without one.
  const bool separator = text.rfind("---", 0) == 0 || text.rfind("...", 0) == 0 ||
                         text.find("\n---") != std::string::npos ||
                         text.find("\n...") != std::string::npos;
  if (!separator) return std::nullopt;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    // A syntax error after the first document: it is the second one.
    if (e.mark.is_null()) return SourceLocation{file, 0, 0};
    return SourceLocation{file, e.mark.line + 1, e.mark.column + 1};
  }
  if (docs.size() < 2) return std::nullopt;
  const YAML::Mark m = docs[1].Mark();
  if (!m.is_null() && m.line >= 0) return SourceLocation{file, m.line + 1, m.column + 1};
  if (auto marker = second_marker(text, file)) return marker;
  return SourceLocation{file, 0, 0};
}

}  // namespace bubblesim
