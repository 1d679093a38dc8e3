// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6), in the fixed order
// of PyTorch's ScheduleZBVZeroBubble (docs/schedule-rules.md 4.10). V placement: device r holds
// chunk 0 = stage r and chunk 1 = stage 2p-1-r, so a microbatch enters and leaves at device 0. The
// backward is split into B (input gradients) and W (weight gradients).
//
// Per device r, with n = max(2p-1, m) and F/B/W counters per chunk:
//   F(c0) x (2(p-r)-1); (F(c1), F(c0)) x r; (F(c1), B(c1), W(c1)) x (p-r);
//   while F(c1) < F(c0) or F(c0) < n: [F(c0) if F(c0) < n], B(c0), W(c0), F(c1), B(c1), W(c1);
//   (B(c0), B(c1)) x r; (B(c0), W(c0)) x (p-r); remaining W(c1); remaining W(c0).
// Ops of microbatches >= m are dropped (PyTorch turns them into idle slots), so m < 2p-1 works by
// padding. Zero bubble (stage-span metric) when T_F = T_B = T_W and m >= 2p-1; peak p M_B, i.e.
// 2p chunk activations, on every device.
#include <algorithm>

#include "schedules/closed_forms.h"
#include "schedules/generator.h"

namespace bubblesim {
namespace {

Table generate_zb_v(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Table t = Table::empty(p, 2, m, Placement::v_shape(p));
  const std::int32_t n = std::max(2 * p - 1, m);
  for (std::int32_t r = 0; r < p; ++r) {
    auto& ops = t.device_ops[static_cast<std::size_t>(r)];
    const std::int32_t s0 = r, s1 = 2 * p - 1 - r;
    std::int32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    // Padding microbatches (>= m) become idle slots, which in an event-driven replay are nothing.
    auto emit = [&](Op op) {
      if (op.microbatch < m) ops.push_back(op);
    };
    for (std::int32_t k = 0; k < 2 * (p - r) - 1; ++k) emit(Op::forward(s0, f0++));
    for (std::int32_t k = 0; k < r; ++k) {
      emit(Op::forward(s1, f1++));
      emit(Op::forward(s0, f0++));
    }
    for (std::int32_t k = 0; k < p - r; ++k) {
      emit(Op::forward(s1, f1++));
      emit(Op::backward(s1, b1));
      emit(Op::weight(s1, b1++));
    }
    while (f1 < f0 || f0 < n) {
      if (f0 < n) emit(Op::forward(s0, f0++));
      emit(Op::backward(s0, b0));
      emit(Op::weight(s0, b0++));
      emit(Op::forward(s1, f1++));
      emit(Op::backward(s1, b1));
      emit(Op::weight(s1, b1++));
    }
    std::int32_t w0 = b0, w1 = b1;
    for (std::int32_t k = 0; k < r; ++k) {
      emit(Op::backward(s0, b0++));
      emit(Op::backward(s1, b1++));
    }
    for (std::int32_t k = 0; k < p - r; ++k) {
      emit(Op::backward(s0, b0++));
      emit(Op::weight(s0, w0++));
    }
    while (w1 < b1) emit(Op::weight(s1, w1++));
    while (w0 < b0) emit(Op::weight(s0, w0++));
  }
  return t;
}

Formula zb_v_formula(const GeneratorInput& in) {
  const std::int32_t p = in.devices, m = in.microbatches;
  Formula f;
  f.peak_activation_units = 2 * std::min(p, m);
  f.note =
      "zero bubble (stage-span metric) when T_F = T_B = T_W and m >= 2p-1; peak p M_B = 2p chunk "
      "activations on every device (backward-complete release)";
  // Makespan-based ratio derived from the published zero bubble: every device runs without a gap
  // from its first op, and device r's first op F(r, 0) starts r chunk-forwards after device 0, so
  // makespan = (p-1) T + 6m T with T the chunk time: ratio (p-1)/(6m+p-1).
  if (!in.costs.stages.empty() && has_uniform_stage_times(in.costs) && m >= 2 * p - 1) {
    const StageCost& c = in.costs.stages.front();
    if (c.forward == c.backward_input && c.forward == c.backward_weight) {
      f.bubble_ratio = static_cast<double>(p - 1) / static_cast<double>(6 * m + p - 1);
      f.note += "; makespan ratio (p-1)/(6m+p-1) derived from it";
    }
  }
  return f;
}

}  // namespace

void register_zb_v(Registrar& registrar) {
  registrar.add(Generator{GeneratorInfo{"zb-v",
                                        "zero-bubble V schedule: 2 chunks per device in a V "
                                        "(device r holds stages r and 2p-1-r), "
                                        "backward split into B and W, PyTorch's fixed order",
                                        "V",
                                        "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, "
                                        "section 6; PyTorch ScheduleZBVZeroBubble",
                                        {}},
                          generate_zb_v, zb_v_formula});
}

}  // namespace bubblesim
