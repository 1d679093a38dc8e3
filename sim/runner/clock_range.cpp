#include "sim/runner/clock_range.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/units/diagnostics.h"

namespace bubblesim {

void check_clock_range(const Scenario& sc, const ResolvedScenario& r) {
  // Half of 2^63 ps: the compute alone must leave the other half for everything between ops.
  constexpr double kLimitPs = 4611686018427387904.0;
  const double iterations = std::max(1.0, static_cast<double>(sc.iteration.count));
  const double m = static_cast<double>(sc.microbatches);
  for (std::size_t s = 0; s < r.costs.stages.size(); ++s) {
    const StageCost& c = r.costs.stages[s];
    double op_ps = 0;
    for (Time t : {c.forward, c.backward_input, c.backward_weight, c.recompute})
      op_ps += static_cast<double>(t.ps());
    const double step_ps =
        s < r.optimizer_step.size() ? static_cast<double>(r.optimizer_step[s].ps()) : 0.0;
    const double work_ps = iterations * (m * op_ps + step_ps);
    if (work_ps <= kLimitPs) continue;
    throw InputError({Diagnostic{
        sc.microbatches_where, "pipeline.microbatches",
        fmt::format("{} iteration{} x {} microbatches x (F + B + W + R = {:.4g} h) on stage {} "
                    "are {:.3g} h of compute, past the {:.0f} h (half of the 64-bit picosecond "
                    "clock) a replay can hold: use fewer microbatches, iterations "
                    "(iteration.count) or shorter op times",
                    sc.iteration.count, sc.iteration.count == 1 ? "" : "s", sc.microbatches,
                    op_ps / 3.6e15, s, work_ps / 3.6e15, kLimitPs / 3.6e15)}});
  }
}

}  // namespace bubblesim
