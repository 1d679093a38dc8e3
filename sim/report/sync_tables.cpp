#include "sim/report/sync_tables.h"

#include <fmt/format.h>

#include "sim/report/metric_format.h"
#include "sim/report/text_table.h"

namespace bubblesim {
SyncTable cell_table(std::string title, const std::vector<std::string>& headings,
                     const std::vector<std::vector<Cell>>& cells, std::size_t collapse_column) {
  CellText text = write_cells(headings, cells);
  SyncTable out{std::move(title), {text.headings, text.rows}, {}};
  if (collapse_column > 0) out.rows.rows = collapse_numbered_rows(out.rows.rows, collapse_column);
  for (std::size_t c = 1; c < headings.size(); ++c) {
    const bool words =
        !cells.empty() && c < cells.front().size() && !cells.front()[c].unit &&
        cells.front()[c].content.find_first_not_of("0123456789-.%") != std::string::npos;
    if (words) out.left.push_back(c);
  }
  return out;
}

std::vector<SyncTable> sync_tables(const ScenarioRun& result) {
  std::vector<std::vector<Cell>> sync, collectives, links;
  for (const ScheduleRun& r : result.runs) {
    const SyncMetrics& y = r.simulation.metrics.sync;
    sync.push_back({Cell::text(r.label), Cell::seconds(y.dp_sync), Cell::seconds(y.exposed_dp_sync),
                    Cell::seconds(y.replica_sync), Cell::seconds(y.optimizer),
                    Cell::seconds(y.tp_comm)});
    for (const CollectiveSummary& c : y.collectives) {
      collectives.push_back(
          {Cell::text(r.label), Cell::text(c.name), Cell::text(c.algorithm),
           Cell::text(std::to_string(c.ranks)), Cell::text(std::to_string(c.count)),
           Cell::bytes(c.bytes), Cell::seconds(c.simulated), Cell::seconds(c.closed_form),
           Cell::text(c.bus_bandwidth > 0 ? fmt::format("{:.1f}", c.bus_bandwidth / 1e9)
                                          : std::string("-"))});
    }
    for (const LinkClassUsage& c : y.link_classes)
      links.push_back(
          {Cell::text(r.label), Cell::text(c.name), Cell::seconds(c.busy), Cell::bytes(c.bytes)});
  }
  return {
      cell_table("gradient sync",
                 {"sync", "dp sync", "exposed dp", "replica sync", "optimizer", "tp comm"}, sync),
      cell_table("collectives",
                 {"collective", "name", "algorithm", "ranks", "count", "bytes", "simulated",
                  "closed form", "busbw GB/s"},
                 collectives, 1),
      cell_table("link classes", {"link class", "class", "busy", "bytes"}, links)};
}

}  // namespace bubblesim
