#pragma once
// The optimizer's view of one scheduling problem: S stages on p devices (straight placement, S = p,
// stage s on device s; or V placement, S = 2p, device d holding stages d and 2p-1-d as ZB-V), m
// microbatches, split backward (F, B = backward for inputs, W = backward for weights), a delay on
// every cross-device edge F(s) -> F(s+1) and B(s+1) -> B(s) (per stage boundary: the fixed delay,
// or the route's latency plus the message over its bottleneck bandwidth), and a per-device
// activation limit. What each op allocates and frees is the replay's rule
// (schedules/activation_memory.h): with M_W <= M_B and the split release the zero-bubble paper's
// deltas F +M_B, B -(M_B - M_W), W -M_W (docs/schedule-rules.md 4.8); with M_W > M_B (sequence
// parallelism) B allocates M_W - M_B at its start; under the backward-complete release B frees
// nothing and W everything.
//
// When the problem allows them, the optimizer also decides per activation whether to keep it,
// offload it to host memory (O on the device's D2H copy engine right after its F, L on the H2D
// engine before its B) or recompute it (R right before its B; the F keeps only the stage input),
// with the engine's memory semantics (docs/memory.md).
//
// Times are integer picoseconds and memory integer bytes, so the timing model is exact.

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "schedules/activation_memory.h"
#include "schedules/list_scheduling.h"
#include "schedules/op.h"

namespace bubblesim::optimizer {

/// F, B, W and R run on the device's compute stream, O (offload) on its D2H copy engine, L
/// (reload) on its H2D copy engine.
enum class StepKind : std::uint8_t { F, B, W, R, O, L };
inline constexpr int kStepKinds = 6;
inline constexpr bool is_copy(StepKind k) { return k == StepKind::O || k == StepKind::L; }
/// The table's op kind of a step.
OpKind op_kind(StepKind k);

/// One op of a device's order: kind, stage (global) and microbatch.
struct Step {
  StepKind kind = StepKind::F;
  std::int32_t stage = 0;
  std::int32_t microbatch = 0;
  // By kind, stage, microbatch: Orders compare (and go into sets) lexicographically.
  friend auto operator<=>(const Step&, const Step&) = default;
  friend bool operator==(const Step&, const Step&) = default;
};

/// Per device, the ops in list order (copy ops start no earlier than the compute op listed before
/// them, as in the engine).
using Order = std::vector<std::vector<Step>>;

/// stage-span: the largest per-device span (the ZB paper's cost); makespan: the last end;
/// iteration: what one training iteration takes with the work after the last op
/// (docs/optimizer.md).
enum class Objective { Makespan, StageSpan, Iteration };
std::string_view objective_name(Objective o);  // "makespan", "stage-span", "iteration"

/// Straight: stage s on device s (S = p); V: device d holds stages d and 2p-1-d (ZB-V);
/// Interleaved: device d holds stages d and p+d (Megatron's interleaved 1F1B, PipeOffload).
enum class PlacementKind { Straight, V, Interleaved };
std::string_view placement_name(PlacementKind k);  // "straight", "v", "interleaved"

/// The memory side of the ZB model: what one F keeps and one B leaves until its W, per stage, and
/// what each device may hold.
struct MemoryModel {
  std::vector<std::int64_t> activation_bytes;   // per stage: M_B
  std::vector<std::int64_t> weight_grad_bytes;  // per stage: M_W (may exceed M_B)
  /// Per stage: the unit a backward that recomputes inside itself holds while it runs (empty:
  /// none; StageCost::backward_recompute).
  std::vector<std::int64_t> unit_bytes;
  std::vector<std::int64_t> limit_bytes;                 // per device: the activation limit
  ReleaseConvention release = ReleaseConvention::Split;  // `memory.release`, as the replay's
};

/// The delay on every stage boundary s = 0..S-2 (zero where both stages are on one device).
struct BoundaryDelays {
  std::vector<std::int64_t> forward_ps;   // F(s) -> F(s+1)
  std::vector<std::int64_t> backward_ps;  // B(s+1) -> B(s)
};

/// The iteration objective (docs/optimizer.md, docs/iterations.md): per device the work after its
/// last op (its optimizer step); with a global barrier every device first waits for the slowest
/// and `barrier_ps` (the synchronisation itself), then runs its step.
struct IterationTail {
  std::vector<std::int64_t> post_ps;
  bool global_barrier = false;
  std::int64_t barrier_ps = 0;
};

/// Offload and recompute (used only when allowed), with their costs per stage.
struct MemoryOps {
  bool allow_offload = false, allow_recompute = false;
  std::vector<std::int64_t> d2h_ps, h2d_ps;     // copy time of one M_B to / from host
  std::vector<std::int64_t> recompute_ps;       // duration of R
  std::vector<std::int64_t> stage_input_bytes;  // what a recomputed F keeps
};

struct Problem {
  // Shape:
  std::int32_t devices = 0;       // p
  std::int32_t stages = 0;        // S: p (straight) or 2p (V)
  std::int32_t microbatches = 0;  // m
  PlacementKind placement = PlacementKind::Straight;
  std::vector<std::int32_t> device_of;  // per stage
  // Per stage durations:
  std::vector<std::int64_t> forward_ps, backward_ps, weight_ps;
  MemoryModel memory;
  BoundaryDelays comm;
  Objective objective = Objective::StageSpan;
  IterationTail iteration;  // only for the iteration objective
  MemoryOps memory_ops;

  /// Sets devices, stages, microbatches, placement, device_of and zero delays on every boundary.
  void set_shape(std::int32_t p, std::int32_t m, PlacementKind kind);
  /// The same delay on every cross-device boundary (fixed-delay communication), zero elsewhere.
  void set_uniform_comm(std::int64_t ps);
  /// Plans every stage as the zero-bubble runtime does (optimizer param plan_costs: median): the
  /// upper median over stages of F, B, W, R and the transfers between devices, M_B likewise and
  /// M_W = M_B / 2 (its scheduler's units: an F holds 2, a B and a W free 1 each).
  void plan_with_median_stage();
  /// The stages device d holds, in increasing order.
  std::vector<std::int32_t> stages_of(std::int32_t device) const;

  /// Position of (stage, microbatch) in per-activation arrays: stage * m + microbatch.
  std::size_t index(std::int32_t stage, std::int32_t microbatch) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(microbatches) +
           static_cast<std::size_t>(microbatch);
  }
  std::size_t activations() const { return index(stages, 0); }
  std::int32_t device(std::int32_t stage) const {
    return device_of[static_cast<std::size_t>(stage)];
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
        return memory_ops.recompute_ps[s];
      case StepKind::O:
        return memory_ops.d2h_ps[s];
      case StepKind::L:
        return memory_ops.h2d_ps[s];
    }
    return 0;
  }
  /// Delay on the edge into F(s + 1) from F(s), and into B(s) from B(s + 1).
  std::int64_t forward_delay(std::int32_t s) const {
    return comm.forward_ps[static_cast<std::size_t>(s)];
  }
  std::int64_t backward_delay(std::int32_t s) const {
    return comm.backward_ps[static_cast<std::size_t>(s)];
  }
  /// Returned by forward_ready / backward_ready while an input has not been produced.
  static constexpr std::int64_t kNotReady = std::numeric_limits<std::int64_t>::max();
  /// When F(s, j) can start: the previous stage's F of j ended (`f_end` by index(), -1 while it
  /// has not run) plus the forward delay; 0 on the first stage.
  std::int64_t forward_ready(std::int32_t s, std::int32_t j,
                             const std::vector<std::int64_t>& f_end) const {
    return inputs_ready(Op::forward(s, j), f_end, f_end);
  }
  /// When B(s, j) can start: its F ended and the next stage's B of j ended plus the backward delay.
  std::int64_t backward_ready(std::int32_t s, std::int32_t j,
                              const std::vector<std::int64_t>& f_end,
                              const std::vector<std::int64_t>& b_end) const {
    return inputs_ready(Op::backward(s, j), f_end, b_end);
  }
  bool memory_ops_allowed() const { return memory_ops.allow_offload || memory_ops.allow_recompute; }
  /// The sizes the memory rules read for one stage (the stage input is zero when the problem
  /// has none).
  ActivationBytes activation_of(std::int32_t stage) const {
    const auto s = static_cast<std::size_t>(stage);
    return ActivationBytes{
        Bytes(memory.activation_bytes[s]), Bytes(memory.weight_grad_bytes[s]),
        Bytes(s < memory_ops.stage_input_bytes.size() ? memory_ops.stage_input_bytes[s] : 0),
        Bytes(s < memory.unit_bytes.size() ? memory.unit_bytes[s] : 0)};
  }
  /// One op's allocation at its start and release at its end (schedules/activation_memory.h,
  /// the replay's rule), for an activation recomputed or not; F, B, W split as the optimizer's.
  MemoryStep memory_step(StepKind k, std::int32_t stage, bool recomputed = false) const {
    return bubblesim::memory_step(op_kind(k), activation_of(stage), true, recomputed,
                                  memory.release);
  }
  /// Net memory change of one F, B or W of a kept activation (ZB paper with M_W <= M_B and the
  /// split release: ΔF = M_B, ΔB = M_W - M_B, ΔW = -M_W).
  std::int64_t memory_delta(StepKind k, std::int32_t stage) const {
    if (k != StepKind::F && k != StepKind::B && k != StepKind::W) return 0;
    const MemoryStep m = memory_step(k, stage);
    return (m.allocated - m.freed).count();
  }
  /// What a kept activation holds between its B and its W (M_W under the split release).
  std::int64_t held_after_backward(std::int32_t stage) const {
    return memory_step(StepKind::W, stage).freed.count();
  }
  /// Work of one stage: m (T_F + T_B + T_W).
  std::int64_t stage_work_ps(std::int32_t stage) const {
    const auto s = static_cast<std::size_t>(stage);
    return microbatches * (forward_ps[s] + backward_ps[s] + weight_ps[s]);
  }
  /// Work per device: the sum over its stages.
  std::int64_t work_ps(std::int32_t device) const;
  std::int64_t post(std::int32_t device) const {
    return iteration.post_ps.empty() ? 0 : iteration.post_ps[static_cast<std::size_t>(device)];
  }
  /// What the iteration objective adds after device d's last op: its own step without a barrier;
  /// with a global barrier the barrier and the slowest step (every device steps after it).
  std::int64_t iteration_tail(std::int32_t device) const;

 private:
  /// When `op` (an F or a B) can start from its inputs (list_scheduling.h's walk: F and B ends by
  /// index(), -1 while not run, plus the boundary delays), or kNotReady.
  std::int64_t inputs_ready(const Op& op, const std::vector<std::int64_t>& f_end,
                            const std::vector<std::int64_t>& b_end) const {
    struct Ends {
      const Problem& p;
      const std::vector<std::int64_t>& f_end;
      const std::vector<std::int64_t>& b_end;
      std::int64_t end(OpKind k, std::int32_t s, std::int32_t j) const {
        if (k != OpKind::Forward && k != OpKind::Backward) return list_scheduling::kAbsent;
        const std::int64_t e = (k == OpKind::Forward ? f_end : b_end)[p.index(s, j)];
        return e < 0 ? list_scheduling::kPending : e;
      }
    };
    const list_scheduling::Inputs in = list_scheduling::inputs_of(
        op, stages, Ends{*this, f_end, b_end},
        [&](list_scheduling::DependencyKind d, std::int32_t s, std::int32_t, std::int64_t e) {
          const std::int32_t boundary = list_scheduling::transfer_stage(d, s);
          return e + (d == list_scheduling::DependencyKind::Activation ? forward_delay(boundary)
                                                                       : backward_delay(boundary));
        });
    return in.pending ? kNotReady : in.ready;
  }
};

/// The objective of a replay from per-device first starts and last ends (first_start < 0: the
/// device ran nothing); for the iteration objective the first iteration's end, which the MILP
/// minimizes in its place (the objective itself needs a second replay: TimingModel).
std::int64_t objective_cost(const Problem& problem, const std::vector<std::int64_t>& first_start,
                            const std::vector<std::int64_t>& last_end);

/// A certified lower bound on the objective (any order, any memory plan): for every device, its own
/// work plus the idle it cannot avoid before its first B (only F's can run until the first B's
/// inputs have come back through the later stages, at most as many as the activation limit holds
/// without offload or recompute); with the makespan also the time before its first op can start;
/// with the iteration objective plus its step (and the barrier), the largest over devices with a
/// global barrier and the smallest without one (problem.cpp says why).
std::int64_t lower_bound(const Problem& problem);

}  // namespace bubblesim::optimizer
