#include "sim/sweep/sweep_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "sim/report/atomic_file.h"
#include "sim/report/progress.h"
#include "sim/report/text_report.h"
#include "sim/runner/scenario_runner.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/sweep_errors.h"
#include "sim/sweep/sweep_file.h"
#include "sim/sweep/sweep_fingerprint.h"
#include "sim/sweep/sweep_resume.h"
#include "sim/units/overflow_error.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

std::string header_for(const SweepSpec& spec) {
  std::string h = "point,entry";
  for (const SweepAxis& a : spec.axes) h.append(",").append(csv_quote(a.path));
  std::string report = csv_report_header();
  report.pop_back();  // newline
  return h + "," + report + ",error\n";
}

std::string axis_cells(const SweepSpec& spec, std::int64_t point) {
  std::string cells;
  std::vector<std::size_t> c = spec.coordinates(point);
  for (std::size_t i = 0; i < spec.axes.size(); ++i)
    cells.append(",").append(csv_quote(spec.axes[i].labels[c[i]]));
  return cells;
}

// All rows of one point, each ending in a newline. Invalid scenarios give one row with the error.
std::string run_point(const SweepSpec& spec, const Registry& registry, std::int64_t point,
                      std::int64_t max_ops, int threads, bool& failed) {
  std::string prefix_axes = axis_cells(spec, point);
  std::string base_dir = scenario_base_dir(spec.base_file);
  try {
    Scenario scenario =
        load_scenario_string(spec.scenario_yaml(point), spec.base_file, base_dir, registry);
    scenario.command_line.max_ops = max_ops;
    scenario.command_line.threads = threads;
    ScenarioRun result = run_scenario(scenario, registry);
    std::string rows;
    for (std::size_t e = 0; e < result.runs.size(); ++e) {
      std::string row = csv_report_row(scenario, result.runs[e]);
      row.pop_back();
      rows += fmt::format("{},{}{},{},\n", point, e, prefix_axes, row);
    }
    return rows;
  } catch (const OverflowError& e) {
    failed = true;
    return fmt::format("{},0{},{},{}\n", point, prefix_axes,
                       csv_report_cells_without_run("invalid"),
                       csv_quote(fmt::format(
                           "{} (the simulated time or memory does not fit in 64 bits)", e.what())));
  } catch (const InputError& e) {
    failed = true;
    std::string message = e.diagnostics().empty() ? e.what() : e.diagnostics().front().message;
    return fmt::format("{},0{},{},{}\n", point, prefix_axes,
                       csv_report_cells_without_run("invalid"), csv_quote(message));
  }
}

std::pair<std::int64_t, std::int64_t> row_key(const std::string& row, const std::string& file) {
  std::size_t a = row.find(',');
  std::size_t b = a == std::string::npos ? a : row.find(',', a + 1);
  try {
    if (b == std::string::npos) throw std::invalid_argument("short row");
    return {std::stoll(row.substr(0, a)), std::stoll(row.substr(a + 1, b - a - 1))};
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: the row '{}' does not start with point,entry numbers", file,
                                 row.substr(0, 40)));
  }
}

// A shard's CSV, an input of `merge`: a regular file (remembered, so -o onto it is refused),
// read with the bound of schedule tables since a part holds up to 10^7 points' rows.
std::vector<std::string> read_lines(const std::string& path) {
  std::istringstream in(read_text_file(path, InputSource::file, kMaxTableFileBytes));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// A sweep whose first point is not a valid scenario is a bad sweep file (an axis path or value
// the scenario does not accept), not a row to record: report it and write nothing.
void check_first_point(const SweepSpec& spec, const Registry& registry) {
  if (spec.point_count() == 0) return;
  try {
    (void)load_scenario_string(spec.scenario_yaml(0), spec.base_file,
                               scenario_base_dir(spec.base_file), registry);
  } catch (const InputError& e) {
    // Located at the axis value (or base key) that makes it invalid (sim/sweep/sweep_errors.h).
    throw locate_point_error(spec, 0, e);
  }
}

// Starts the partial file: fresh, or with --resume the verified prefix of what an interrupted
// run left in it or else of the finished output. Returns how many points that prefix holds.
std::size_t start_output(SweepFile& file, const ResumeExpectation& expect, bool resume,
                         SweepSummary& summary) {
  if (resume) {
    // Read piece by piece: the file of a large sweep is gigabytes.
    ResumeScan partial(expect, file.partial());
    const bool from_partial =
        file.read_partial([&](std::string_view piece) { return partial.feed(piece); });
    const std::string source = from_partial ? file.partial() : file.target();
    ResumeScan target(expect, source);
    if (!from_partial) file.read_target([&](std::string_view piece) { return target.feed(piece); });
    const ResumeCheck check = from_partial ? partial.finish() : target.finish();
    if (check.keep_bytes > 0) {
      if (!check.problem.empty())
        summary.notes.push_back(
            fmt::format("--resume: '{}' {}; recomputing from there", source, check.problem));
      file.truncate(from_partial ? check.keep_bytes : 0);
      if (!from_partial) file.append_from_target(check.keep_bytes);
      summary.resumed = static_cast<std::int64_t>(check.points_kept);
      summary.rows = check.rows_kept;
      return check.points_kept;
    }
  }
  file.truncate(0);
  file.append(expect.fingerprint_line + expect.header);
  return 0;
}

// Runs points[from..] on a thread pool and appends their rows to `file` in point order. Workers
// run at most `window` points ahead of the file, so memory holds a window of rows, not the
// sweep's: a sweep of 10^7 points writes its first rows at once.
void compute_points(const SweepSpec& spec, const Registry& registry, const SweepOptions& options,
                    const ShardPoints& points, std::size_t from, SweepFile& file,
                    SweepSummary& summary) {
  const std::size_t count = points.size();
  const int jobs =
      std::max(1, std::min<int>(options.jobs, static_cast<int>(std::max<std::size_t>(
                                                  count > from ? count - from : 1, 1))));
  const std::size_t window = std::max<std::size_t>(64, 16 * static_cast<std::size_t>(jobs));
  std::vector<std::optional<std::string>> rows(window);  // point k in slot k % window
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next = from;     // the next point a worker takes
  std::size_t written = from;  // the next point the file needs
  std::size_t done = 0;
  std::exception_ptr error;
  auto stop = [&](std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (!error) error = e;
    next = count;
    changed.notify_all();
  };
  auto worker = [&] {
    std::unique_lock lock(mutex);
    while (true) {
      changed.wait(lock, [&] { return next >= count || next < written + window; });
      if (next >= count) return;
      const std::size_t k = next++;
      lock.unlock();
      bool failed = false;
      std::string text;
      try {
        // Points already run in parallel: a point's Monte Carlo samples (variability) run on one
        // thread then, or on every core when the sweep has one worker. Results are the same.
        text =
            run_point(spec, registry, points[k], options.max_ops, options.jobs > 1 ? 1 : 0, failed);
      } catch (...) {
        stop(std::current_exception());
        return;
      }
      lock.lock();
      rows[k % window] = std::move(text);
      if (failed) ++summary.failed;
      ++done;
      changed.notify_all();
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(jobs));
  try {
    for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  } catch (const std::system_error& e) {
    // More threads than the system allows (--jobs above the process limit): the ones started
    // share the points; with none, nothing runs and nothing is left to join.
    if (threads.empty())
      throw InputError(
          fmt::format("sweep: cannot start a worker thread ({}); lower --jobs", e.what()));
  }
  // The progress line (sim/report/progress.h): on a terminal only, after a second.
  ProgressReporter progress("sweep", 0, stderr, options.progress && isatty(STDERR_FILENO) != 0);
  const auto began = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex);
  while (written < count && !error) {
    changed.wait_for(lock, std::chrono::milliseconds(200),
                     [&] { return error || rows[written % window].has_value(); });
    std::string batch;
    for (; written < count && rows[written % window]; ++written) {
      batch += *rows[written % window];
      rows[written % window].reset();
    }
    const std::size_t finished = done;
    changed.notify_all();  // room in the window
    lock.unlock();
    try {
      file.append(batch);
    } catch (...) {
      stop(std::current_exception());
    }
    summary.rows += std::count(batch.begin(), batch.end(), '\n');
    if (progress.enabled()) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      const std::size_t all = finished + static_cast<std::size_t>(summary.resumed);
      const double rate = seconds > 0 ? static_cast<double>(finished) / seconds : 0.0;
      const double left = static_cast<double>(count - from - finished);
      // One kind of status ("points"), so the line is redrawn at most ten times a second.
      std::string eta;
      if (rate > 0) {
        const double s_left = left / rate;
        eta = s_left >= 3600 ? fmt::format(", about {:.1f} h left", s_left / 3600)
              : s_left >= 60 ? fmt::format(", about {:.0f} min left", s_left / 60)
                             : fmt::format(", about {:.0f} s left", s_left);
      }
      progress.detail(
          fmt::format("points {}/{}, {:.1f} a second{}", all, summary.points, rate, eta));
    }
    lock.lock();
  }
  lock.unlock();
  for (std::thread& t : threads) t.join();
  progress.finish();
  if (error) std::rethrow_exception(error);
}

// Every shard of the sweep exactly once, when the parts are shard outputs (their fingerprint line
// names "shard=I/N"): a missing or repeated shard would give a file no single run writes.
void check_shard_coverage(const std::vector<std::string>& parts,
                          const std::vector<std::string>& shards) {
  std::map<std::int64_t, std::string> seen;
  std::int64_t count = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (shards[i].empty() != shards.front().empty()) {
      throw InputError(fmt::format("merge: '{}' is {}a shard output and '{}' is {}", parts[i],
                                   shards[i].empty() ? "not " : "", parts.front(),
                                   shards.front().empty() ? "not" : "one"));
    }
    if (shards[i].empty()) continue;
    const Shard s = parse_shard(shards[i]);
    if (count != 0 && s.count != count) {
      throw InputError(fmt::format("merge: '{}' is shard {} but '{}' is one of {} shards", parts[i],
                                   shards[i], parts.front(), count));
    }
    count = s.count;
    if (auto [at, fresh] = seen.emplace(s.index, parts[i]); !fresh) {
      throw InputError(fmt::format("merge: shard {} is given twice ('{}', '{}')", shards[i],
                                   at->second, parts[i]));
    }
  }
  for (std::int64_t i = 0; i < count; ++i) {
    if (seen.count(i) == 0)
      throw InputError(fmt::format("merge: shard {}/{} is missing from the parts", i, count));
  }
}

}  // namespace

Shard parse_shard(const std::string& text) {
  std::size_t slash = text.find('/');
  Shard s;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    s.index = std::stoll(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("junk");
    s.count = std::stoll(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw InputError(fmt::format(
        "--shard: '{}' is not of the form I/N (0-based index I below the count N)", text));
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw InputError(fmt::format("--shard: '{}' needs 0 <= I < N", text));
  }
  return s;
}

Shard shard_from_environment() {
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  if (auto id = env("SLURM_ARRAY_TASK_ID")) {
    if (auto count = env("SLURM_ARRAY_TASK_COUNT")) return parse_shard(*id + "/" + *count);
  }
  if (auto id = env("JOB_COMPLETION_INDEX")) {
    if (auto count = env("BUBBLESIM_SHARD_COUNT")) return parse_shard(*id + "/" + *count);
    throw InputError(
        "JOB_COMPLETION_INDEX is set but BUBBLESIM_SHARD_COUNT is not: set it to the Job's "
        "completions");
  }
  return Shard{};
}

SweepSummary run_sweep(const SweepSpec& spec, const Registry& registry,
                       const SweepOptions& options) {
  const std::int64_t total = spec.point_count();
  const ShardPoints points(
      options.shard.index, options.shard.count,
      total > options.shard.index
          ? (total - options.shard.index + options.shard.count - 1) / options.shard.count
          : 0);
  check_first_point(spec, registry);
  // Every file the points read is part of the fingerprint: a changed topology or table makes
  // --resume rerun the points instead of keeping rows computed from the old one.
  std::vector<std::string> inputs = sweep_point_inputs(spec, registry);
  inputs.insert(inputs.end(), options.plugins.begin(), options.plugins.end());

  ResumeExpectation expect{fingerprint_line(sweep_fingerprint(spec, options.max_ops, inputs),
                                            options.shard.index, options.shard.count),
                           header_for(spec), points,
                           [&spec](std::int64_t p) { return axis_cells(spec, p); }};
  SweepFile file(options.output);
  SweepSummary summary;
  summary.points = static_cast<std::int64_t>(points.size());
  const std::size_t kept = start_output(file, expect, options.resume, summary);
  compute_points(spec, registry, options, points, kept, file, summary);
  file.finish();
  summary.bytes_written = file.bytes_written();
  return summary;
}

std::string sweep_csv_header(const SweepSpec& spec) { return header_for(spec); }
std::string sweep_axis_cells(const SweepSpec& spec, std::int64_t point) {
  return axis_cells(spec, point);
}
std::string sweep_point_rows(const SweepSpec& spec, const Registry& registry, std::int64_t point,
                             std::int64_t max_ops, int threads, bool& failed) {
  return run_point(spec, registry, point, max_ops, threads, failed);
}
void check_sweep_first_point(const SweepSpec& spec, const Registry& registry) {
  check_first_point(spec, registry);
}
std::size_t start_sweep_output(SweepFile& file, const ResumeExpectation& expect, bool resume,
                               SweepSummary& summary) {
  return start_output(file, expect, resume, summary);
}

void merge_sweep_outputs(const std::vector<std::string>& parts, const std::string& output) {
  if (parts.empty()) throw InputError("merge: name at least one part");
  std::string first, header;
  std::vector<std::string> shards;  // "I/N" per part, empty for an unsharded output
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::string>> rows;
  for (const std::string& part : parts) {
    std::vector<std::string> lines = read_lines(part);
    // The fingerprint line of a shard names it; the merged file carries the sweep's own.
    std::string fingerprint;
    shards.emplace_back();
    if (!lines.empty() && is_sweep_comment(lines.front())) {
      const std::size_t at = lines.front().find(" shard=");
      fingerprint = lines.front().substr(0, at);
      if (at != std::string::npos) shards.back() = lines.front().substr(at + 7);
      lines.erase(lines.begin());
    }
    if (lines.empty()) throw InputError(fmt::format("merge: '{}' is empty", part));
    if (header.empty()) {
      first = fingerprint;
      header = lines.front();
    } else if (lines.front() != header || fingerprint != first) {
      throw InputError(fmt::format("merge: '{}' has a different {} than '{}'", part,
                                   fingerprint != first ? "fingerprint" : "header", parts.front()));
    }
    for (std::size_t i = 1; i < lines.size(); ++i)
      rows.emplace_back(row_key(lines[i], part), lines[i]);
  }
  check_shard_coverage(parts, shards);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string content = first.empty() ? "" : first + "\n";
  content += header + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].first == rows[i - 1].first) {
      throw InputError(fmt::format("merge: point {} entry {} appears twice", rows[i].first.first,
                                   rows[i].first.second));
    }
    content += rows[i].second + "\n";
  }
  write_file_atomically(output, content);
}

}  // namespace bubblesim
