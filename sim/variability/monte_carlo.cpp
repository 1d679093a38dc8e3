#include "sim/variability/monte_carlo.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>

#include "sim/engine/engine.h"
#include "sim/variability/sampled_durations.h"

namespace bubblesim {

std::shared_ptr<const DurationModel> sample_durations(
    const EngineInput& input, const std::shared_ptr<const VariabilitySpec>& spec,
    std::uint64_t sample) {
  return std::make_shared<const SampledDurations>(spec, sample, input.durations,
                                                  input.compute_slowdown);
}

int monte_carlo_workers(int threads, std::int64_t samples) {
  std::int64_t workers = threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  workers = std::min(workers, std::max<std::int64_t>(samples, 1));
  return static_cast<int>(workers);
}

MonteCarloResult run_monte_carlo(const EngineInput& input,
                                 const std::shared_ptr<const VariabilitySpec>& spec, int threads,
                                 const MonteCarloProgress& progress) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(spec->samples, 0));
  MonteCarloResult out;
  out.samples.resize(n);
  const int workers = monte_carlo_workers(threads, spec->samples);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  std::atomic<std::uint64_t> done{0};
  std::mutex telling;
  auto finished_one = [&] {
    const std::uint64_t now = ++done;
    if (!progress) return;
    // The last sample always reports (it waits for its turn); the others skip while one reports.
    std::unique_lock lock(telling, std::defer_lock);
    if (now == n)
      lock.lock();
    else if (!lock.try_lock())
      return;
    progress(now, n);
  };
  auto work = [&](int w) {
    try {
      const std::size_t begin = n * static_cast<std::size_t>(w) / static_cast<std::size_t>(workers);
      const std::size_t end =
          n * static_cast<std::size_t>(w + 1) / static_cast<std::size_t>(workers);
      if (begin == end) return;
      EngineInput own = input;
      own.scratch = make_replay_scratch();  // one replay at a time per scratch
      Engine engine(std::move(own));
      for (std::size_t i = begin; i < end; ++i) {
        const SimulationResult r = engine.run(sample_durations(input, spec, i));
        out.samples[i] =
            SampleOutcome{r.status, r.metrics.makespan.seconds(), r.metrics.bubble_ratio,
                          r.metrics.iteration.iteration_time.seconds()};
        finished_one();
      }
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  if (workers == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(workers));
    int started = 0;
    try {
      for (; started < workers; ++started) pool.emplace_back(work, started);
    } catch (const std::system_error&) {
      // No more threads allowed (a process limit): this thread runs the remaining slices, so the
      // samples, and the result, are the same.
      for (int w = started; w < workers; ++w) work(w);
    }
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  std::vector<double> makespan(n), bubble(n), iteration(n);
  for (std::size_t i = 0; i < n; ++i) {
    makespan[i] = out.samples[i].makespan_s;
    bubble[i] = out.samples[i].bubble_ratio;
    iteration[i] = out.samples[i].iteration_time_s;
    if (out.samples[i].status != RunStatus::Ok) ++out.failed_samples;
  }
  out.makespan_s = summarize(makespan);
  out.bubble_ratio = summarize(bubble);
  out.iteration_time_s = summarize(iteration);
  if (n > 0) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return makespan[a] < makespan[b]; });
    out.median_sample = order[(n - 1) / 2];
  }
  return out;
}

}  // namespace bubblesim
