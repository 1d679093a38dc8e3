#include "sim/report/html_timeline_bins.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "sim/report/metric_format.h"

namespace bubblesim {
namespace {

// One character per level, 0 (idle) to 63 (busy the whole bin); safe inside JSON and HTML.
constexpr char kBinLevels[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::int64_t kTopLevel = 63;
constexpr int kBinKinds = 4;  // F, B, W, other

double us(std::int64_t ps) { return static_cast<double>(ps) / 1e6; }

bool ran(const OpTiming& t) { return t.start.ps() >= 0 && t.end.ps() >= 0; }

int bin_kind(OpKind kind) {
  switch (kind) {
    case OpKind::Forward:
      return 0;
    case OpKind::Backward:
      return 1;
    case OpKind::Weight:
      return 2;
    default:
      return 3;
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

/// The time the bins cover: the makespan, or the last end if an op ran past it.
std::int64_t span_ps(const ScheduleRun& run) {
  std::int64_t span = std::max<std::int64_t>(run.simulation.metrics.makespan.ps(), 1);
  for (auto row : run.simulation.timings)
    for (const OpTiming& t : row)
      if (ran(t)) span = std::max(span, t.end.ps());
  return span;
}

char level_char(std::int64_t busy, std::int64_t bin_ps) {
  if (busy <= 0) return kBinLevels[0];
  const std::int64_t level = (std::min(busy, bin_ps) * kTopLevel + bin_ps / 2) / bin_ps;
  return kBinLevels[std::clamp<std::int64_t>(level, 1, kTopLevel)];
}

/// Busy picoseconds of one device per kind and bin (kind-major).
std::vector<std::int64_t> device_busy(const std::vector<Op>& ops, std::span<const OpTiming> timings,
                                      const TimelineBins& bins) {
  std::vector<std::int64_t> busy(static_cast<std::size_t>(kBinKinds * bins.bins), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpTiming& t = timings[i];
    if (!ran(t)) continue;
    const std::int64_t s = t.start.ps(), e = t.end.ps();
    const std::size_t row = static_cast<std::size_t>(bin_kind(ops[i].kind) * bins.bins);
    for (std::int64_t b = s / bins.bin_ps; b < bins.bins && b * bins.bin_ps < e; ++b) {
      const std::int64_t from = std::max(s, b * bins.bin_ps);
      const std::int64_t to = std::min(e, (b + 1) * bins.bin_ps);
      busy[row + static_cast<std::size_t>(b)] += to - from;
    }
  }
  return busy;
}

std::string group_digits(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// One device's memory as the maximum per memory bin, a sample only where it changes.
nlohmann::json downsampled_series(const std::vector<MemorySample>& samples,
                                  const TimelineBins& bins) {
  nlohmann::json out = nlohmann::json::array();
  if (samples.empty()) return out;
  MemorySample level = samples.front();  // the level carried into the next bin
  std::optional<MemorySample> last;      // the last sample written
  std::size_t i = 0;
  std::int64_t from = 0;
  for (; i < samples.size(); from += bins.memory_bin_ps) {
    const std::int64_t to = from + bins.memory_bin_ps;
    MemorySample top{Time::from_ps(from), level.activation, level.total};
    for (; i < samples.size() && samples[i].time.ps() < to; ++i) {
      level = samples[i];
      top.activation = std::max(top.activation, level.activation);
      top.total = std::max(top.total, level.total);
    }
    if (last && last->activation == top.activation && last->total == top.total) continue;
    out.push_back({us(from), top.activation.count(), top.total.count()});
    last = top;
  }
  // `from` is the next bin: from there on the level after the last change holds.
  if (last->activation != level.activation || last->total != level.total)
    out.push_back({us(from), level.activation.count(), level.total.count()});
  return out;
}

}  // namespace

std::size_t ops_that_ran(const ScheduleRun& run) {
  std::size_t n = 0;
  for (auto row : run.simulation.timings)
    for (const OpTiming& t : row) n += ran(t) ? 1 : 0;
  return n;
}

std::vector<std::optional<std::size_t>> exact_op_budgets(const std::vector<std::size_t>& ran,
                                                         std::size_t max_ops) {
  std::vector<std::optional<std::size_t>> budgets(ran.size());
  if (std::accumulate(ran.begin(), ran.end(), std::size_t{0}) <= max_ops) return budgets;
  std::vector<std::size_t> order(ran.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ran[a] < ran[b]; });
  std::size_t left = max_ops;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k], share = left / (order.size() - k);
    if (ran[i] <= share) {
      left -= ran[i];
      continue;
    }
    budgets[i] = share;
    left -= share;
  }
  return budgets;
}

TimelineBins plan_timeline_bins(const ScheduleRun& run, std::size_t exact_budget) {
  TimelineBins plan;
  const std::int64_t span = span_ps(run);
  plan.bin_ps = std::max<std::int64_t>(ceil_div(span, kHtmlTimelineBins), 1);
  plan.bins = static_cast<std::int32_t>(ceil_div(span, plan.bin_ps));
  plan.memory_bin_ps = std::max<std::int64_t>(ceil_div(span, kHtmlMemoryBins), 1);
  std::vector<std::int64_t> starts;
  for (auto row : run.simulation.timings)
    for (const OpTiming& t : row)
      if (ran(t)) starts.push_back(t.start.ps());
  plan.ran_ops = starts.size();
  plan.exact_bins = plan.bins;
  if (starts.size() > exact_budget) {
    // The (budget + 1)-th start: the window ends at the bin boundary at or before it.
    std::nth_element(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(exact_budget),
                     starts.end());
    plan.exact_bins = static_cast<std::int32_t>(starts[exact_budget] / plan.bin_ps);
  }
  const std::int64_t until = plan.exact_until().ps();
  plan.exact_ops = static_cast<std::size_t>(
      std::count_if(starts.begin(), starts.end(), [&](std::int64_t s) { return s < until; }));
  return plan;
}

nlohmann::json utilisation_bins(const ScheduleRun& run, const TimelineBins& bins) {
  nlohmann::json busy = nlohmann::json::array();
  for (std::size_t d = 0; d < run.table.device_ops.size(); ++d) {
    const std::vector<std::int64_t> b =
        device_busy(run.table.device_ops[d], run.simulation.timings[d], bins);
    nlohmann::json kinds = nlohmann::json::array();
    for (int k = 0; k < kBinKinds; ++k) {
      std::string levels;
      for (std::int32_t i = 0; i < bins.bins; ++i)
        levels += level_char(b[static_cast<std::size_t>(k * bins.bins + i)], bins.bin_ps);
      kinds.push_back(levels);
    }
    busy.push_back(kinds);
  }
  nlohmann::json j;
  j["ops"] = bins.ran_ops;
  j["bins"] = bins.bins;
  j["bin_us"] = us(bins.bin_ps);
  j["exact_bins"] = bins.exact_bins;
  j["exact_until_us"] = us(bins.exact_until().ps());
  j["exact_ops"] = bins.exact_ops;
  j["memory_bins"] = kHtmlMemoryBins;
  j["note"] = aggregation_note(bins);
  j["busy"] = busy;
  return j;
}

nlohmann::json downsampled_memory(const MemoryTimeline& memory, const TimelineBins& bins) {
  nlohmann::json out = nlohmann::json::array();
  for (std::int32_t d = 0; d < memory.devices(); ++d)
    out.push_back(downsampled_series(memory.samples(d), bins));
  return out;
}

std::string aggregation_note(const TimelineBins& bins) {
  return fmt::format(
      "timeline aggregated: {} ops shown as {} bins per device (busy fraction per kind); exact ops "
      "for the first {} ({} ops: zoom in there for full detail); memory as the maximum per {} "
      "bins",
      group_digits(bins.ran_ops), group_digits(static_cast<std::size_t>(bins.bins)),
      format_metric(MetricUnit::Seconds, bins.exact_until().seconds()),
      group_digits(bins.exact_ops), group_digits(static_cast<std::size_t>(kHtmlMemoryBins)));
}

}  // namespace bubblesim
