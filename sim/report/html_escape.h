#pragma once
// Escaping text for HTML element content and attribute values (shared by the HTML reports).

#include <string>
#include <string_view>

namespace bubblesim {

/// Replaces & < > " by their entities.
inline std::string escape_html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace bubblesim
