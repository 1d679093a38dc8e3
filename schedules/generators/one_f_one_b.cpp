// 1F1B (PipeDream-Flush / DAPPLE): device r runs w = min(p-r-1, m) warm-up forwards, then m-w
// rounds of (next forward, oldest backward), then w cool-down backwards (SCHEDULES.md 4.2). The
// backward is not split: B runs input and weight gradients as one op, as in the zero-bubble
// paper's comparison.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_one_f_one_b(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Table t = Table::empty(p, 1, m, Placement::straight(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(2 * static_cast<std::size_t>(m));
    const std::int32_t warmup = std::min(p - r - 1, m);
    std::int32_t next_forward = 0, next_backward = 0;
    while (next_forward < warmup) ops.push_back(Op::forward(r, next_forward++));
    while (next_forward < m) {
      ops.push_back(Op::forward(r, next_forward++));
      ops.push_back(Op::backward(r, next_backward++));
    }
    while (next_backward < m) ops.push_back(Op::backward(r, next_backward++));
  }
  return t;
}

Formula one_f_one_b_formula(const GeneratorInput& in) {
  Formula f;
  f.peak_activation_units = std::min(in.devices, in.microbatches);
  f.note = "bubble (p-1)/(m+p-1) with uniform stages and no communication; peak p-r on device r";
  if (has_uniform_stage_times(in.costs))
    f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  return f;
}

}  // namespace

void register_one_f_one_b(Registrar& registrar) {
  registrar.add(Generator{
      GeneratorInfo{"1f1b",
                    "one forward, one backward after a warm-up of p-r-1 forwards (PipeDream-Flush)",
                    "straight",
                    "Narayanan et al., PipeDream-Flush 2021; Fan et al., DAPPLE 2021",
                    {}},
      generate_one_f_one_b, one_f_one_b_formula});
}

}  // namespace bubblesim
