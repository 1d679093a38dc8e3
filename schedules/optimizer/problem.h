#pragma once
// The optimizer's view of one scheduling problem: p stages on p devices (straight placement), m
// microbatches, split backward (F, B = backward for inputs, W = backward for weights), a fixed
// delay on cross-device F->F and B->B edges, and a per-device activation limit with the zero-bubble
// paper's memory deltas: F +M_B, B -(M_B - M_W), W -M_W (SCHEDULES.md 4.8).
//
// When the problem allows them, the optimizer also decides per activation whether to keep it,
// offload it to host memory (O on the device's D2H copy engine right after its F, L on the H2D
// engine before its B) or recompute it (R right before its B; the F keeps only the stage input),
// with the engine's memory semantics (docs/memory.md).
//
// Times are integer picoseconds and memory integer bytes, so the timing model is exact.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "schedules/op.h"

namespace bubblesim::optimizer {

/// F, B, W and R run on the device's compute stream, O (offload) on its D2H copy engine, L
/// (reload) on its H2D copy engine.
enum class StepKind : std::uint8_t { F, B, W, R, O, L };
inline constexpr int kStepKinds = 6;
inline constexpr bool is_copy(StepKind k) { return k == StepKind::O || k == StepKind::L; }
/// The table's op kind of a step.
inline constexpr OpKind op_kind(StepKind k) {
  switch (k) {
    case StepKind::F:
      return OpKind::Forward;
    case StepKind::B:
      return OpKind::Backward;
    case StepKind::W:
      return OpKind::Weight;
    case StepKind::R:
      return OpKind::Recompute;
    case StepKind::O:
      return OpKind::Offload;
    case StepKind::L:
      return OpKind::Reload;
  }
  return OpKind::Forward;
}

/// One op of a device's order: kind and microbatch (the stage is the device).
struct Step {
  StepKind kind = StepKind::F;
  std::int32_t microbatch = 0;
  friend bool operator==(const Step&, const Step&) = default;
};

/// Per device, the ops in list order (copy ops start no earlier than the compute op listed before
/// them, as in the engine).
using Order = std::vector<std::vector<Step>>;

enum class Objective { Makespan, StageSpan };
std::string_view objective_name(Objective o);  // "makespan", "stage-span"

struct Problem {
  std::int32_t stages = 0;                                       // p (= devices)
  std::int32_t microbatches = 0;                                 // m
  std::vector<std::int64_t> forward_ps, backward_ps, weight_ps;  // per stage
  std::int64_t comm_ps = 0;                     // fixed delay on F->F and B->B edges
  std::vector<std::int64_t> activation_bytes;   // M_B per stage
  std::vector<std::int64_t> weight_grad_bytes;  // M_W per stage
  std::vector<std::int64_t> limit_bytes;        // activation limit per device
  Objective objective = Objective::StageSpan;
  // Offload and recompute (used only when allowed):
  bool allow_offload = false, allow_recompute = false;
  std::vector<std::int64_t> d2h_ps, h2d_ps;     // per stage: copy time of one M_B to / from host
  std::vector<std::int64_t> recompute_ps;       // per stage: duration of R
  std::vector<std::int64_t> stage_input_bytes;  // per stage: what a recomputed F keeps

  /// Position of (stage, microbatch) in per-activation arrays: stage * m + microbatch.
  std::size_t index(std::int32_t stage, std::int32_t microbatch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(microbatches) +
           static_cast<std::size_t>(microbatch);
  }
  std::int64_t duration(StepKind k, std::int32_t stage) const {
    const auto s = static_cast<std::size_t>(stage);
    switch (k) {
      case StepKind::F:
        return forward_ps[s];
      case StepKind::B:
        return backward_ps[s];
      case StepKind::W:
        return weight_ps[s];
      case StepKind::R:
        return recompute_ps[s];
      case StepKind::O:
        return d2h_ps[s];
      case StepKind::L:
        return h2d_ps[s];
    }
    return 0;
  }
  bool memory_ops_allowed() const { return allow_offload || allow_recompute; }
  /// Memory change of one F, B or W on its device (ZB paper: ΔF = M_B, ΔB = M_W - M_B, ΔW = -M_W),
  /// for an activation that is kept.
  std::int64_t memory_delta(StepKind k, std::int32_t stage) const {
    const auto s = static_cast<std::size_t>(stage);
    return k == StepKind::F   ? activation_bytes[s]
           : k == StepKind::B ? weight_grad_bytes[s] - activation_bytes[s]
           : k == StepKind::W ? -weight_grad_bytes[s]
                              : 0;
  }
  /// Work per device: m (T_F + T_B + T_W).
  std::int64_t work_ps(std::int32_t stage) const {
    const auto s = static_cast<std::size_t>(stage);
    return microbatches * (forward_ps[s] + backward_ps[s] + weight_ps[s]);
  }
};

/// A certified lower bound on the objective (any order, any memory): for every device, its own work
/// plus the time before its first op can start (forward fill from stage 0 with delays; makespan
/// only) and the time after its last B until the end (the drain it cannot avoid: its last op is at
/// best a W after the last B of its stage).
std::int64_t lower_bound(const Problem& problem);

}  // namespace bubblesim::optimizer
