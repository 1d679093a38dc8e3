// Eager 1F1B (minPP's create_eager1f1b), static restatement of docs/schedule-rules.md 4.3: device r
// runs min(2(p-r)-1, m) warm-up forwards, then alternates (oldest backward, next forward) while
// forwards remain, then the remaining backwards. The longer warm-up leaves room to overlap P2P;
// at T_comm = 0 the makespan is 1F1B's. Not known to match minPP's greedy output op for op.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_eager_1f1b(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Table t = Table::empty(p, 1, m, Placement::straight(p));
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(2 * static_cast<std::size_t>(m));
    const std::int32_t warmup = std::min(2 * (p - r) - 1, m);
    std::int32_t next_forward = 0, next_backward = 0;
    while (next_forward < warmup) ops.push_back(Op::forward(r, next_forward++));
    while (next_forward < m) {
      ops.push_back(Op::backward(r, next_backward++));
      ops.push_back(Op::forward(r, next_forward++));
    }
    while (next_backward < m) ops.push_back(Op::backward(r, next_backward++));
  }
  return t;
}

Formula eager_1f1b_formula(const GeneratorInput& in) {
  Formula f;
  f.peak_activation_units = std::min(2 * in.devices - 1, in.microbatches);
  f.note =
      "bubble (p-1)/(m+p-1) with uniform stages and no communication (as 1F1B); peak min(2(p-r)-1, "
      "m) on "
      "device r";
  if (has_uniform_stage_times(in.costs))
    f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  return f;
}

}  // namespace

void register_eager_1f1b(Registrar& registrar) {
  registrar.add(
      Generator{GeneratorInfo{"eager-1f1b",
                              "1F1B with a warm-up of 2(p-r)-1 forwards, leaving room to overlap "
                              "stage-to-stage transfers",
                              "straight",
                              "minPP create_eager1f1b (ailzhang/minPP), static restatement",
                              {}},
                generate_eager_1f1b, eager_1f1b_formula});
}

}  // namespace bubblesim
