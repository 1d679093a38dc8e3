#pragma once
// Escaping text for Markdown (the report's `--format md` and `regress`): the one rule every
// string that came from a user goes through before a Markdown writer prints it.

#include <string>
#include <string_view>

#include "sim/report/html_escape.h"
#include "sim/units/utf8.h"

namespace bubblesim {

/// `s` as Markdown shows it and nothing more: control characters and newlines as \xHH (a name
/// cannot start a line, a heading or a list item), `|` (a table cell), HTML's `<`, `>` and `&` as
/// entities (no raw HTML such as `<script>`), and the characters that open code, emphasis or a
/// link backslash-escaped.
inline std::string markdown_text(std::string_view s) {
  std::string out;
  for (char c : visible_controls(s)) {
    switch (c) {
      case '|':
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
        out += '\\';
        out += c;
        break;
      default:
        append_html_char(c, out, false);
    }
  }
  return out;
}

}  // namespace bubblesim
