#pragma once
// Escaping text for HTML element content and attribute values (shared by the HTML reports): the
// one rule every string that came from a user goes through before an HTML writer prints it.

#include <string>
#include <string_view>

#include "sim/units/utf8.h"

namespace bubblesim {

/// Replaces & < > " ' by their entities (no tag, no attribute can be opened or closed), and
/// writes control characters but the newline (ESC, BEL, CR, C1) as \xHH, as the text report does.
inline std::string escape_html(std::string_view raw) {
  const std::string s = visible_controls(raw, true);
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
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace bubblesim
