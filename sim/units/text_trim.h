#pragma once
// Whitespace trimmed from both ends of a view (the quantity parser's and the YAML reader's).

#include <cctype>
#include <string_view>

namespace bubblesim {

inline std::string_view trim_whitespace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace bubblesim
