#include "sim/report/component_rows.h"

#include <algorithm>

#include "sim/engine/component_kind.h"

namespace bubblesim {

std::vector<Metric> with_component_rows(std::vector<Metric> table) {
  for (const ComponentKind& kind : builtin_components()) {
    auto at = table.end();
    if (!kind.rows_after.empty()) {
      at = std::find_if(table.begin(), table.end(), [&](const Metric& m) {
        return m.level == MetricLevel::Simulation && m.key == kind.rows_after;
      });
      if (at != table.end()) ++at;
    }
    for (const ResultRow& row : kind.rows) {
      at = table.insert(
          at, Metric{row.key, MetricLevel::Simulation, row.unit, row.direction, row.shape, "",
                     row.help, [get = row.get](const MetricInput& in) { return get(in.sim()); }});
      ++at;
    }
  }
  return table;
}

}  // namespace bubblesim
