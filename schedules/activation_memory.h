#pragma once
// The memory rules of one activation (stage, microbatch), in one place for the planner and the
// replay: what each op allocates when it starts and frees when it ends (docs/memory.md). The
// optimizer's timing model and heuristics (schedules/optimizer) plan with them and the engine's
// memory accounting, list replay and stream replay (sim/engine) replay with them, so that a plan
// that fits its limit fits in the replay (tests/engine/planner_memory_test.cpp checks it).
//
//   F   start: the activation M_B (only the stage input when it is recomputed before its B)
//   R   start: M_B (the activation rebuilt)
//   B   start: what a split backward's M_W exceeds M_B by (sequence parallelism: the
//              weight-gradient inputs B makes and W needs outweigh what B frees; else nothing),
//              plus one checkpointed unit's activations when B recomputes per unit (`unit`)
//       end:   unsplit, everything; split under the Split convention all but M_W (and the stage
//              input when recomputed), under BackwardComplete nothing; the unit in every case
//   W   end:   everything the activation still holds (M_W under Split)
//   O   end:   what the F kept (the D2H copy moved it); L start: the same, back

#include <algorithm>
#include <optional>

#include "schedules/memory_settings.h"
#include "schedules/op.h"
#include "schedules/replay_rules.h"
#include "schedules/stage_costs.h"
#include "sim/units/bytes.h"

namespace bubblesim {

/// The sizes the rules read: M_B, M_W and the stage input of one stage's activation.
struct ActivationBytes {
  Bytes activation;   // M_B: held from F until the backward
  Bytes weight_grad;  // M_W: what a split backward holds until its W
  Bytes stage_input;  // what a recomputed F keeps until R rebuilds the activation
  /// Recompute inside the backward (StageCost::backward_recompute): one checkpointed unit's
  /// rebuilt activations, held while B runs (it recomputes a unit, runs back through it and
  /// frees it before the next, so one unit at a time), freed at B's end.
  Bytes unit;
};
inline ActivationBytes activation_bytes(const StageCost& c) {
  return ActivationBytes{c.activation, c.weight_grad, c.stage_input, c.backward_recompute.unit};
}

/// What the op completing the forward allocates: the stage input only when the activation is
/// recomputed before its backward, else the whole activation.
inline Bytes forward_allocation(const ActivationBytes& a, bool recomputed) {
  return recomputed ? a.stage_input : a.activation;
}

/// What a backward allocates at its start: the unit it recomputes (recompute inside B), and for
/// a split backward the part of M_W it creates beyond the M_B it holds, when M_W > M_B (the
/// weight-gradient GEMMs' inputs, made by B and kept until W, outweigh what B frees; sequence
/// parallelism, docs/memory.md; B then frees nothing of it and W frees M_W). An unsplit backward
/// keeps nothing for a W.
inline Bytes backward_growth(const ActivationBytes& a, bool split) {
  return a.unit + (split ? Bytes(replay_rules::split_backward_allocates(a.activation.count(),
                                                                        a.weight_grad.count()))
                         : Bytes::zero());
}

/// What the backward of an activation frees at its end (before clamping to what is resident),
/// and whether it ends the activation's count; nullopt when it frees nothing (a split backward
/// under BackwardComplete without a unit: the W frees everything). The unit recomputed inside B
/// is freed at B's end under every convention.
struct BackwardRelease {
  Bytes bytes;
  bool unit;
};
inline std::optional<BackwardRelease> backward_release(const ActivationBytes& a, bool split,
                                                       bool recomputed, ReleaseConvention release) {
  const Bytes input = recomputed ? a.stage_input : Bytes::zero();
  if (!split) return BackwardRelease{a.activation + input + a.unit, true};
  if (release == ReleaseConvention::Split)
    return BackwardRelease{
        Bytes(replay_rules::split_backward_frees(a.activation.count(), a.weight_grad.count())) +
            input + a.unit,
        false};
  if (a.unit > Bytes::zero()) return BackwardRelease{a.unit, false};
  return std::nullopt;
}

/// What an activation holds while its backward runs: what its F (and R) allocated and what its
/// B allocates at its start (the most its backward frees, and what a W frees after B's part).
inline Bytes held_during_backward(const ActivationBytes& a, bool split, bool recomputed) {
  return forward_allocation(a, recomputed) + (recomputed ? a.activation : Bytes::zero()) +
         backward_growth(a, split);
}

/// What the W of a split backward frees: everything the F, R and B allocated that the B did not
/// free (M_W under Split; max(M_B, M_W), plus the stage input when recomputed, under
/// BackwardComplete).
inline Bytes weight_release(const ActivationBytes& a, bool recomputed, ReleaseConvention release) {
  const Bytes held = held_during_backward(a, true, recomputed);
  const std::optional<BackwardRelease> freed = backward_release(a, true, recomputed, release);
  return held - (freed ? freed->bytes : Bytes::zero());
}

/// One op's memory on its device: `allocated` when it starts, `freed` when it ends. `split`: the
/// activation's backward is split into B and W; `recomputed`: an R rebuilds it before its B.
struct MemoryStep {
  Bytes allocated, freed;
};
inline MemoryStep memory_step(OpKind kind, const ActivationBytes& a, bool split, bool recomputed,
                              ReleaseConvention release) {
  switch (kind) {
    case OpKind::Forward:
      return {forward_allocation(a, recomputed), Bytes::zero()};
    case OpKind::Recompute:
      return {a.activation, Bytes::zero()};
    case OpKind::Backward: {
      const std::optional<BackwardRelease> r = backward_release(a, split, recomputed, release);
      return {backward_growth(a, split), r ? r->bytes : Bytes::zero()};
    }
    case OpKind::Weight:
      return {Bytes::zero(), weight_release(a, recomputed, release)};
    case OpKind::Offload:
      return {Bytes::zero(), forward_allocation(a, recomputed)};
    case OpKind::Reload:
      return {forward_allocation(a, recomputed), Bytes::zero()};
    case OpKind::ForwardBackward:  // two activations: the F half's and the B half's steps
      break;
  }
  return {};
}

// The same rules for a StageCost (the engine's per-stage costs).
inline Bytes forward_allocation(const StageCost& c, bool recomputed) {
  return forward_allocation(activation_bytes(c), recomputed);
}
inline Bytes backward_growth(const StageCost& c, bool split) {
  return backward_growth(activation_bytes(c), split);
}
inline std::optional<BackwardRelease> backward_release(const StageCost& c, bool split,
                                                       bool recomputed, ReleaseConvention release) {
  return backward_release(activation_bytes(c), split, recomputed, release);
}
inline Bytes held_during_backward(const StageCost& c, bool split, bool recomputed) {
  return held_during_backward(activation_bytes(c), split, recomputed);
}

}  // namespace bubblesim
