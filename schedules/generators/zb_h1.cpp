// ZB-H1, the zero-bubble paper's handcrafted schedule with 1F1B's memory (Qi et al., ICLR 2024,
// section 2, Fig. 3; docs/schedule-rules.md 4.6): device r warms up with p-r forwards, runs r
// rounds of (B, F), then (B, W, F), and defers r weight-gradient ops W to fill the cool-down
// bubble.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"
#include "zero_bubble_handcrafted.h"

namespace bubblesim {
namespace {

Table generate_zb_h1(const GeneratorInput& in) {
  const std::int32_t p = in.devices;
  return zero_bubble::handcrafted_table(
      in, [p](std::int32_t r) { return p - r; }, [](std::int32_t r) { return r; });
}

Formula zb_h1_formula(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Formula f;
  f.peak_activation_units = std::min(p, m);
  f.note =
      "ZB paper Table 2: per-device bubble (p-1)(T_F+T_B-T_W) with uniform stages, no "
      "communication, m >= p and "
      "T_W <= min(T_F, T_B); device 0 starts first and ends last, so makespan = stage_span_max and "
      "the ratio is "
      "the same under both metrics; memory (p-r) M_B + r M_W on device r, peak p M_B";
  if (in.costs.stages.empty()) return f;
  const StageCost& c = in.costs.stages.front();
  if (has_uniform_stage_times(in.costs) && m >= p && c.backward_weight <= c.forward &&
      c.backward_weight <= c.backward_input) {
    const double bubble = (p - 1) * (c.forward + c.backward_input - c.backward_weight).seconds();
    const double work = m * (c.forward + c.full_backward()).seconds();
    f.bubble_ratio = bubble / (work + bubble);
  }
  return f;
}

}  // namespace

void register_zb_h1(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"zb-h1",
                                        "zero-bubble handcrafted H1: backward split into B "
                                        "(inputs) and W (weights), r W's of device r "
                                        "deferred into the cool-down; 1F1B's activation memory",
                                        "straight",
                                        "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024 "
                                        "(arXiv 2401.10241), section 2, Fig. 3",
                                        {}},
                          generate_zb_h1, zb_h1_formula});
}

}  // namespace bubblesim
