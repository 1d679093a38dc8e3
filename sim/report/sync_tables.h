#pragma once
// The gradient sync of a run as tables (docs/parallelism.md), shared by the text and HTML reports:
// per schedule its sync times (DP all-reduce, exposed part, replica sync, optimizer, TP
// communication), its collectives (simulated against the closed form; identical ones of
// consecutive stages collapse into one row, "stage 0-7") and the busy time of each class of link.

#include <string>
#include <vector>

#include "sim/report/metric_format.h"
#include "sim/report/report_rows.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

struct SyncTable {
  std::string title;              // "gradient sync", "collectives", "link classes"
  ReportRows rows;                // headings with their units, cells as text
  std::vector<std::size_t> left;  // columns of words (left-aligned in text)
};

/// Cells written in their units (write_cells); rows that differ only in a counted name in
/// `collapse_column` (when > 0) collapse into one; columns whose first cell is words are `left`.
/// The text report's tables of quantities are made with it too.
SyncTable cell_table(std::string title, const std::vector<std::string>& headings,
                     const std::vector<std::vector<Cell>>& cells, std::size_t collapse_column = 0);

/// The three tables, in the order the text report prints them.
std::vector<SyncTable> sync_tables(const ScenarioRun& result);

}  // namespace bubblesim
