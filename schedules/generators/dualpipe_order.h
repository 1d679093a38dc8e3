#pragma once
// The eight-step per-device order shared by DualPipe and DualPipeV
// (docs/schedule-rules.md 4.13, 4.14; deepseek-ai/DualPipe: DualPipe.step, DualPipeV.step).
// Internal to the two generators.
//
// A device runs two "phases": phase 0 is the stage it holds in the first half of a microbatch's
// path, phase 1 the stage in the second half. Each phase takes its microbatches in FIFO order.
// B0/B1 are full backwards (no W), I0/I1 input backwards whose W joins one FIFO queue, W pops the
// oldest queued W, X&Y is one fused op (F of X overlapped with the full backward of Y). With
// H = half the path length in devices, h = the device's distance from the path end nearest to it,
// n = microbatches per phase:
//   1. F0 x 2(H-h-1)             2. (F0, F1) x (h+1)          3. (I1, W, F1) x (H-h-1)
//   4. (F0&B1, F1&B0) x (n-2H+h+1), the first F0&B1 unfused when h = H-1 (the middle devices)
//   5. (B1, F1&B0) x (H-h-1)     6. (B1, B0) x (h+1), the first h+1 full B, the last h+1 I
//   7. (W, I0) x (H-h-1)         8. W x (h+1)
// Each phase gets exactly n forwards and n backwards and the W queue ends empty.

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "schedules/generator.h"
#include "schedules/op.h"

namespace bubblesim::dualpipe_detail {

struct Phase {
  std::int32_t stage = 0;
  std::int32_t first_microbatch = 0;  // the phase's microbatches are first .. first+n-1
};

struct DeviceShape {
  std::int32_t half = 0;       // H
  std::int32_t distance = 0;   // h
  std::int32_t per_phase = 0;  // n
  bool overlap = true;         // false: emit each F&B pair as F then B
};

inline std::vector<Op> device_order(const Phase (&phase)[2], const DeviceShape& shape) {
  const std::int32_t H = shape.half, h = shape.distance, n = shape.per_phase;
  std::vector<Op> ops;
  ops.reserve(4 * static_cast<std::size_t>(n));
  std::int32_t forwards[2] = {0, 0}, backwards[2] = {0, 0};
  std::deque<Op> weights;  // W of each input-backward, oldest first
  auto next_forward = [&](int k) {
    return Op::forward(phase[k].stage, phase[k].first_microbatch + forwards[k]++);
  };
  auto full_backward = [&](int k) {
    return Op::backward(phase[k].stage, phase[k].first_microbatch + backwards[k]++);
  };
  auto F = [&](int k) { ops.push_back(next_forward(k)); };
  auto B = [&](int k) { ops.push_back(full_backward(k)); };
  auto I = [&](int k) {
    Op b = full_backward(k);
    ops.push_back(b);
    weights.push_back(Op::weight(b.stage, b.microbatch));
  };
  auto W = [&]() {
    ops.push_back(weights.front());
    weights.pop_front();
  };
  auto FB = [&](int f, int b) {
    Op fo = next_forward(f), bo = full_backward(b);
    if (shape.overlap) {
      ops.push_back(Op::fused(fo.stage, fo.microbatch, bo.stage, bo.microbatch));
    } else {
      ops.push_back(fo);
      ops.push_back(bo);
    }
  };

  for (std::int32_t i = 0; i < 2 * (H - h - 1); ++i) F(0);
  for (std::int32_t i = 0; i < h + 1; ++i) {
    F(0);
    F(1);
  }
  for (std::int32_t i = 0; i < H - h - 1; ++i) {
    I(1);
    W();
    F(1);
  }
  for (std::int32_t i = 0; i < n - 2 * H + h + 1; ++i) {
    if (i == 0 && h == H - 1) {
      // DeepSeek: "We don't overlap these two chunks to further reduce bubble size."
      F(0);
      B(1);
    } else {
      FB(0, 1);
    }
    FB(1, 0);
  }
  for (std::int32_t i = 0; i < H - h - 1; ++i) {
    B(1);
    FB(1, 0);
  }
  for (std::int32_t i = 0; i < 2 * (h + 1); ++i) {
    const int k = i % 2 == 0 ? 1 : 0;
    if (i < h + 1) {
      B(k);
    } else {
      I(k);
    }
  }
  for (std::int32_t i = 0; i < H - h - 1; ++i) {
    W();
    I(0);
  }
  while (!weights.empty()) W();
  return ops;
}

/// Shared with dualpipe-v: the README's bubble with PP stages on the path, evaluated for uniform
/// stage costs `c` (per path stage); a note on when it holds.
inline Formula formula(std::int32_t path_stages, const StageCost& c, bool uniform, bool overlap) {
  Formula f;
  f.peak_activation_units = path_stages + 1;
  f.note = fmt::format(
      "README: per-device bubble (PP/2-1)(T_F&B + T_B - 3T_W) with PP = {}, B the full backward; "
      "exact under "
      "replay only when T_F = T_I and F&B pairs are fused; peak PP+1 = {} stage activations per "
      "device; "
      "parameters 2x",
      path_stages, path_stages + 1);
  if (uniform && overlap) {
    const Time fused = c.fused > Time::zero() ? c.fused : c.forward + c.full_backward();
    const Time idle = (fused + c.full_backward() - c.backward_weight * 3) * (path_stages / 2 - 1);
    f.note += fmt::format(
        "; here {} s{}", idle.seconds(),
        c.forward == c.backward_input
            ? ""
            : " (T_F != T_I: not exact; replay idles more when T_F > T_I, less when T_F < T_I)");
  }
  return f;
}

}  // namespace bubblesim::dualpipe_detail
