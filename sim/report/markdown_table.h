#pragma once
// Markdown tables that show a report's text and nothing more, every cell through markdown_text
// (markdown_escape.h); the run report's and the plan's Markdown share them.

#include <cstddef>
#include <string>

#include "sim/report/report_rows.h"

namespace bubblesim {

/// `rows` as a Markdown table: the first `left_columns` left-aligned, the rest right-aligned.
std::string md_table(const ReportRows& rows, std::size_t left_columns = 1);

}  // namespace bubblesim
