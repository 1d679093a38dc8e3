#pragma once
// Monte Carlo replays (docs/variability.md): N samples of a schedule, each a full replay by the
// Engine with durations drawn by SampledDurations for (seed, sample index). Samples run on worker
// threads, each worker replaying its contiguous block of sample indices on its own Engine (one op
// graph per worker, reused by every replay). A sample's result depends only on (input, spec,
// index) and is stored at its index, so the outcome is byte-identical for any thread count.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "schedules/variability_settings.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/simulation_result.h"
#include "sim/variability/sample_summary.h"

namespace bubblesim {

class DurationModel;

/// What the reports summarise of one sample.
struct SampleOutcome {
  RunStatus status = RunStatus::Ok;
  double makespan_s = 0.0;
  double bubble_ratio = 0.0;
  double iteration_time_s = 0.0;  // SimulationResult::iteration_time (docs/iterations.md)
};

struct MonteCarloResult {
  std::vector<SampleOutcome> samples;  // in sample order
  SampleSummary makespan_s;
  SampleSummary bubble_ratio;
  SampleSummary iteration_time_s;
  /// The median sample: rank floor((N - 1) / 2) of the samples ordered by makespan, ties by
  /// index. Replaying it with observers gives the "typical" timeline.
  std::uint64_t median_sample = 0;
  std::uint64_t failed_samples = 0;  // deadlock or out of memory
};

/// The duration model of sample `sample`: `input`'s durations (or its stage costs and
/// stragglers) times the sample's factors.
std::shared_ptr<const DurationModel> sample_durations(
    const EngineInput& input, const std::shared_ptr<const VariabilitySpec>& spec,
    std::uint64_t sample);

/// Told after each finished sample how many of how many are done (from any worker, one call at
/// a time; a call is skipped while another is running, never the last one). A run of many
/// samples takes minutes (each sample is a full replay): this is how a terminal shows it.
using MonteCarloProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

/// Replays `input` spec->samples times on `threads` workers (0: every hardware thread; never more
/// than the samples). Rethrows the first exception of a worker, in worker order.
MonteCarloResult run_monte_carlo(const EngineInput& input,
                                 const std::shared_ptr<const VariabilitySpec>& spec,
                                 int threads = 0, const MonteCarloProgress& progress = {});

/// The number of workers run_monte_carlo uses for `threads` and `samples`.
int monte_carlo_workers(int threads, std::int64_t samples);

}  // namespace bubblesim
