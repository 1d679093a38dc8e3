#pragma once
// Running a sweep: every point of the cross product (or one shard of them) on a thread pool,
// written as CSV in point order whatever order they finish in. Rows are appended to
// OUTPUT.partial as they complete and the file is renamed to OUTPUT at the end
// (sim/sweep/sweep_file.h), so an interrupted sweep leaves OUTPUT.partial holding a prefix of
// the points; --resume checks it (sim/sweep/sweep_resume.h), keeps those rows and runs the rest,
// giving the bytes an uninterrupted run writes. Shards of one sweep merge into the file a single
// run would have written.
//
// The first line is the sweep's fingerprint, a comment (sim/sweep/sweep_fingerprint.h). CSV
// columns: point, entry (schedule index within the point), one column per axis (its value as
// written), the run report's columns (sim/report/text_report.h csv_report_header), error.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/sweep/sweep_spec.h"

namespace bubblesim {

struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
};

/// "I/N" (0-based I < N).
Shard parse_shard(const std::string& text);
/// From SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX with
/// BUBBLESIM_SHARD_COUNT; {0, 1} when none is set.
Shard shard_from_environment();

struct SweepOptions {
  std::string output;  // CSV file (required)
  int jobs = 1;
  std::int64_t max_ops = 50'000'000;  // --max-ops: tables above it are invalid points
  bool resume = false;
  Shard shard;
  bool progress = false;  // a progress line on stderr
  /// Plugin libraries loaded (--plugin, BUBBLESIM_PLUGIN_PATH): their generators make the rows,
  /// so the fingerprint covers their content too.
  std::vector<std::string> plugins;
};

struct SweepSummary {
  std::int64_t points = 0;   // in this shard
  std::int64_t resumed = 0;  // kept from a previous run
  std::int64_t failed = 0;   // points whose scenario was invalid (rows with an error)
  std::int64_t rows = 0;
  std::uint64_t bytes_written = 0;  // by this run, into the output
  std::vector<std::string> notes;   // what --resume repaired
};

SweepSummary run_sweep(const SweepSpec& spec, const Registry& registry,
                       const SweepOptions& options);

// The pieces run_sweep is made of, for hosts that run the points elsewhere (the Python package's
// sweeps on any executor) and must write the same bytes: the header line, one point's rows, the
// check of the first point, and the start of the output (fresh, or the verified prefix for
// --resume; returns how many of `expect.points` it already holds).
std::string sweep_csv_header(const SweepSpec& spec);
std::string sweep_axis_cells(const SweepSpec& spec, std::int64_t point);
std::string sweep_point_rows(const SweepSpec& spec, const Registry& registry, std::int64_t point,
                             std::int64_t max_ops, int threads, bool& failed);
void check_sweep_first_point(const SweepSpec& spec, const Registry& registry);
class SweepFile;
struct ResumeExpectation;
std::size_t start_sweep_output(SweepFile& file, const ResumeExpectation& expect, bool resume,
                               SweepSummary& summary);

/// Joins shard outputs (same header) into one file ordered by point and entry.
void merge_sweep_outputs(const std::vector<std::string>& parts, const std::string& output);

}  // namespace bubblesim
