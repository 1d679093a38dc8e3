#pragma once
// Escaping text for HTML element content and attribute values (shared by the HTML reports): the
// one rule every string that came from a user goes through before an HTML writer prints it.

#include <string>
#include <string_view>

#include "sim/units/utf8.h"

namespace bubblesim {

/// Appends `c` to `out`, as its entity when it is & < > (no tag can open), and " ' as well when
/// `quotes` (no attribute value can close).
inline void append_html_char(char c, std::string& out, bool quotes = true) {
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
      out += quotes ? "&quot;" : "\"";
      break;
    case '\'':
      out += quotes ? "&#39;" : "'";
      break;
    default:
      out += c;
  }
}

/// `raw` with & < > " ' as entities and control characters but the newline (ESC, BEL, CR, C1)
/// written as \xHH, as the text report does.
inline std::string escape_html(std::string_view raw) {
  const std::string s = visible_controls(raw, true);
  std::string out;
  out.reserve(s.size());
  for (char c : s) append_html_char(c, out);
  return out;
}

}  // namespace bubblesim
