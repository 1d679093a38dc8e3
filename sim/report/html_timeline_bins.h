#pragma once
// Internal to the HTML report (html_report.cpp): a long timeline aggregated so that the page stays
// small. Beyond the report's op bound (render_html_report's `max_ops`) a run embeds, instead of
// every op, per-device utilisation bins (kHtmlTimelineBins equal time bins over its makespan, the
// busy fraction of each bin per kind F, B, W and other), the exact ops that start before a bin
// boundary chosen so that at most the run's share of the bound is embedded (full detail when
// zooming into the start), and its memory timeline as the maximum per kHtmlMemoryBins bins (peaks
// and over-budget stretches survive). Everything is integer picoseconds: the output is
// deterministic.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/memory_timeline.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

inline constexpr std::int32_t kHtmlTimelineBins = 2000;
inline constexpr std::int32_t kHtmlMemoryBins = 500;

/// Ops of `run` that ran (a deadlocked run leaves some unplaced).
std::size_t ops_that_ran(const ScheduleRun& run);

/// Per run, how many ops it may embed exactly: nullopt = all of them (no aggregation). When the
/// runs together stay within `max_ops` every run is exact; otherwise the bound is shared out,
/// smallest run first, and a run over its share is aggregated with that share.
std::vector<std::optional<std::size_t>> exact_op_budgets(const std::vector<std::size_t>& ran,
                                                         std::size_t max_ops);

/// How an aggregated run is embedded.
struct TimelineBins {
  std::int64_t bin_ps = 1;         // width of a utilisation bin
  std::int32_t bins = 1;           // utilisation bins per device (kHtmlTimelineBins or fewer)
  std::int32_t exact_bins = 0;     // ops starting before exact_bins * bin_ps are embedded exactly
  std::size_t exact_ops = 0;       // how many that is
  std::size_t ran_ops = 0;         // ops that ran
  std::int64_t memory_bin_ps = 1;  // width of a memory bin
  Time exact_until() const { return Time::from_ps(bin_ps * exact_bins); }
};

/// The bins of `run` with at most `exact_budget` exact ops.
TimelineBins plan_timeline_bins(const ScheduleRun& run, std::size_t exact_budget);

/// The run's "aggregate" object for the page: the plan, a note saying what was aggregated, and per
/// device four strings (F, B, W, other) of one character per bin, the busy fraction in 64 levels
/// (kBinLevels: 'A' = idle ... '_' = busy the whole bin; any activity is at least level 1).
nlohmann::json utilisation_bins(const ScheduleRun& run, const TimelineBins& bins);

/// `memory`'s series as one sample per memory bin where the bin's maximum changes: [bin start
/// (us), maximum activation bytes, maximum total bytes] (the carried-in level counts).
nlohmann::json downsampled_memory(const MemoryTimeline& memory, const TimelineBins& bins);

/// "timeline aggregated: 524,288 ops shown as 2,000 bins per device; exact ops for the first ..."
std::string aggregation_note(const TimelineBins& bins);

}  // namespace bubblesim
