#include "sim/report/ranking.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace bubblesim {
namespace {

constexpr double kTieTolerance = 1e-9;

struct Entry {
  std::string label;
  std::optional<double> value;
  std::size_t order;
};

std::vector<std::string> ranked(std::vector<Entry> entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (std::fabs(*a.value - *b.value) > kTieTolerance) return *a.value < *b.value;
    return a.order < b.order;
  });
  std::vector<std::string> out;
  for (const Entry& e : entries) out.push_back(e.label);
  return out;
}

std::string reason_for(const ScheduleRun& better, const ScheduleRun& worse,
                       const std::string& to_level) {
  if (to_level == "simulation") {
    const Metrics& b = better.simulation.metrics;
    const Metrics& w = worse.simulation.metrics;
    if (worse.simulation.status != RunStatus::Ok) {
      return fmt::format("{} ends with {}", worse.label, run_status_name(worse.simulation.status));
    }
    if (w.sync.enabled && w.sync.exposed_dp_sync > b.sync.exposed_dp_sync) {
      return fmt::format(
          "gradient synchronisation after the pipeline: {} exposed for {} (replica sync {}, DP "
          "sync {}) "
          "vs {} for {}",
          w.sync.exposed_dp_sync, worse.label, w.sync.replica_sync, w.sync.dp_sync,
          b.sync.exposed_dp_sync, better.label);
    }
    return fmt::format("communication on the critical path: exposed comm {} for {} vs {} for {}",
                       w.comm.exposed_comm, worse.label, b.comm.exposed_comm, better.label);
  }
  return "the closed form assumes equal op times and no communication; the table uses the "
         "scenario's costs";
}

}  // namespace

Ranking rank_schedules(const ScenarioRun& result) {
  std::vector<Entry> formula, table_bubble, table, simulation;
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const ScheduleRun& r = result.runs[i];
    if (r.formula.bubble_ratio) formula.push_back({r.label, r.formula.bubble_ratio, i});
    table_bubble.push_back({r.label, r.ideal.metrics.bubble_ratio, i});
    table.push_back({r.label, r.ideal.metrics.makespan.seconds(), i});
    // A schedule that deadlocks ranks last.
    double sim = r.simulation.status == RunStatus::Deadlock
                     ? 1e300
                     : r.simulation.metrics.makespan.seconds();
    simulation.push_back({r.label, sim, i});
  }
  Ranking ranking{ranked(formula), ranked(table), ranked(simulation), {}};

  auto value_of = [](const std::vector<Entry>& entries, std::size_t i) -> std::optional<double> {
    for (const Entry& e : entries)
      if (e.order == i) return e.value;
    return std::nullopt;
  };
  auto compare_levels = [&](const std::vector<Entry>& from, const std::vector<Entry>& to,
                            const std::string& from_name, const std::string& to_name) {
    for (std::size_t a = 0; a < result.runs.size(); ++a) {
      for (std::size_t b = 0; b < result.runs.size(); ++b) {
        auto fa = value_of(from, a), fb = value_of(from, b), ta = value_of(to, a),
             tb = value_of(to, b);
        if (!fa || !fb || !ta || !tb) continue;
        // a strictly ahead of b before, b strictly ahead of a after.
        if (*fa + kTieTolerance < *fb && *tb + kTieTolerance < *ta) {
          ranking.changes.push_back({result.runs[a].label, result.runs[b].label, from_name, to_name,
                                     reason_for(result.runs[b], result.runs[a], to_name)});
        }
      }
    }
  };
  compare_levels(formula, table_bubble, "formula", "table");
  compare_levels(table, simulation, "table", "simulation");
  return ranking;
}

}  // namespace bubblesim
