#pragma once
// A report's rows as an HTML table (the run report's detail and sync tables, the plan's tables):
// every cell escaped, a caption when given.

#include <string>

#include "sim/report/html_escape.h"
#include "sim/report/report_rows.h"

namespace bubblesim {

/// <table class="summary CSS_CLASS"> with the caption (none when empty), the header and the rows.
inline std::string html_table(const ReportRows& rows, const std::string& css_class,
                              const std::string& caption = "") {
  std::string h = "<table class=\"summary" + (css_class.empty() ? "" : " " + css_class) + "\">";
  if (!caption.empty()) h += "<caption>" + escape_html(caption) + "</caption>";
  h += "<thead><tr>";
  for (const std::string& c : rows.header) h += "<th>" + escape_html(c) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (const auto& row : rows.rows) {
    h += "<tr>";
    for (const std::string& c : row) h += "<td>" + escape_html(c) + "</td>";
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

}  // namespace bubblesim
