#include "sim/engine/iteration_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace bubblesim {
IterationBoundary end_iteration(const IterationPlan& plan, const std::vector<Time>& ready,
                                const std::vector<Time>& step, std::int32_t iteration,
                                const std::vector<EngineObserver*>& observers) {
  const std::size_t devices = ready.size();
  const std::string suffix = iteration > 0 ? fmt::format(" (iteration {})", iteration + 1) : "";
  std::vector<Time> done = ready;
  for (const PairSync& pair : plan.pair_syncs) {
    const auto a = static_cast<std::size_t>(pair.first), b = static_cast<std::size_t>(pair.second);
    if (a >= devices || b >= devices) {
      throw std::invalid_argument(
          fmt::format("{} names a device the table does not have", pair.name));
    }
    const Time start = std::max(done[a], done[b]);
    const Time end = start + pair.duration;
    report_collective(observers, pair.name + suffix, pair.first, done[a], end);
    if (b != a) report_collective(observers, pair.name + suffix, pair.second, done[b], end);
    done[a] = done[b] = end;
  }
  if (plan.barrier == IterationBarrier::Global) {
    // Megatron's synchronous step: the gradient-norm all-reduce waits for every device.
    Time last;
    for (Time t : done) last = std::max(last, t);
    const Time end = last + plan.barrier_duration;
    for (std::size_t d = 0; d < devices; ++d) {
      report_collective(observers, "global barrier" + suffix, static_cast<std::int32_t>(d), done[d],
                        end);
      done[d] = end;
    }
  }
  IterationBoundary out;
  out.next_start.resize(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    const Time s = d < step.size() ? step[d] : Time::zero();
    report_collective(observers, "optimizer step" + suffix, static_cast<std::int32_t>(d), done[d],
                      done[d] + s);
    out.next_start[d] = done[d] + s;
    out.completion = std::max(out.completion, out.next_start[d]);
  }
  return out;
}

void record_iterations(const std::vector<Time>& completions, std::int32_t replays, Metrics& m) {
  m.iteration.iterations = static_cast<std::int32_t>(completions.size());
  m.iteration.replays = replays;
  if (!completions.empty()) {
    m.iteration.iteration_time = completions.size() >= 2
                                     ? completions.back() - completions[completions.size() - 2]
                                     : completions.back();
  }
}

}  // namespace bubblesim
