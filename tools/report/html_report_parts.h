#pragma once
// Internal to the HTML report (html_report.cpp): the inline script that draws the embedded data.

namespace bubblesim {

/// The report's inline JavaScript (no external references).
const char* html_report_script();

}  // namespace bubblesim
