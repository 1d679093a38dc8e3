// ZB-H2, the zero-bubble paper's handcrafted schedule with about twice 1F1B's memory (Qi et al.,
// ICLR 2024, section 2, Fig. 3; docs/schedule-rules.md 4.7): device r warms up with 2(p-r)-1
// forwards, runs 2r rounds of (B, F), then (B, W, F), and defers 2r weight-gradient ops W to the
// tail.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"
#include "zero_bubble_handcrafted.h"

namespace bubblesim {
namespace {

Table generate_zb_h2(const GeneratorInput& in) {
  const std::int32_t p = in.devices;
  return zero_bubble::handcrafted_table(
      in, [p](std::int32_t r) { return 2 * (p - r) - 1; }, [](std::int32_t r) { return 2 * r; });
}

Formula zb_h2_formula(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Formula f;
  f.peak_activation_units = std::min(2 * p - 1, m);
  f.note =
      "ZB paper Table 2: per-device (stage-span) bubble (p-1)(T_F+T_B-2T_W) with uniform stages, "
      "no "
      "communication, m >= 2p-1, T_W <= T_F and 2T_W <= T_F+T_B; the makespan adds the "
      "parallelogram: makespan "
      "bubble (p-1) max(T_F+T_B-2T_W, T_F), which the ratio uses; memory (2p-2r-1) M_B + 2r M_W on "
      "device r, peak "
      "(2p-1) M_B";
  if (in.costs.stages.empty()) return f;
  const StageCost& c = in.costs.stages.front();
  if (has_uniform_stage_times(in.costs) && m >= 2 * p - 1 && c.backward_weight <= c.forward &&
      c.backward_weight + c.backward_weight <= c.forward + c.backward_input) {
    const double span_bubble =
        (p - 1) * (c.forward + c.backward_input - c.backward_weight - c.backward_weight).seconds();
    const double bubble = std::max(span_bubble, (p - 1) * c.forward.seconds());
    const double work = m * (c.forward + c.full_backward()).seconds();
    f.bubble_ratio = bubble / (work + bubble);
  }
  return f;
}

}  // namespace

void register_zb_h2(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"zb-h2",
                                        "zero-bubble handcrafted H2: backward split into B "
                                        "(inputs) and W (weights), 2(p-r)-1 warm-up "
                                        "forwards fill the warm-up bubble, 2r W's of device r "
                                        "deferred to the tail; peak (2p-1) M_B",
                                        "straight",
                                        "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024 "
                                        "(arXiv 2401.10241), section 2, Fig. 3",
                                        {}},
                          generate_zb_h2, zb_h2_formula});
}

}  // namespace bubblesim
