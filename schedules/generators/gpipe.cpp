// GPipe (Huang et al., 2019): every device runs all forwards, then all backwards.
// Order per docs/schedule-rules.md 4.1; the backward is one full op (B and W fused).
#include <fmt/format.h>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_gpipe(const GeneratorInput& in) {
  Table t = Table::empty(in.devices, 1, in.microbatches, Placement::straight(in.devices));
  for (std::int32_t r = 0; r < in.devices; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(2 * static_cast<std::size_t>(in.microbatches));
    for (std::int32_t j = 0; j < in.microbatches; ++j) ops.push_back(Op::forward(r, j));
    for (std::int32_t j = 0; j < in.microbatches; ++j) ops.push_back(Op::backward(r, j));
  }
  return t;
}

Formula gpipe_formula(const GeneratorInput& in) {
  Formula f;
  f.peak_activation_units = in.microbatches;
  f.note = "bubble (p-1)/(m+p-1) with uniform stages and no communication; peak m on every device";
  if (has_uniform_stage_times(in.costs))
    f.bubble_ratio = flush_pipeline_bubble_ratio(in.devices, in.microbatches);
  return f;
}

}  // namespace

void register_gpipe(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"gpipe",
                                        "all forwards, then all backwards (fill-drain)",
                                        "straight",
                                        "Huang et al., GPipe, NeurIPS 2019; PyTorch ScheduleGPipe",
                                        {}},
                          generate_gpipe, gpipe_formula});
}

}  // namespace bubblesim
