#pragma once
// Markdown tables and cells that show a report's text and nothing more (the run report's and the
// plan's Markdown share them).

#include <cstddef>
#include <string>

#include "sim/report/report_rows.h"

namespace bubblesim {

/// Any text of a report as Markdown shows it and nothing more: control characters and newlines
/// as \xHH (a name cannot start a line or a heading), `|` (a table cell), HTML's `<`, `>` and `&`
/// as entities (no raw HTML), and the characters that open code, emphasis or a link
/// backslash-escaped.
std::string md_cell(const std::string& s);

/// `rows` as a Markdown table: the first `left_columns` left-aligned, the rest right-aligned.
std::string md_table(const ReportRows& rows, std::size_t left_columns = 1);

}  // namespace bubblesim
