#pragma once
// Per-stage costs: what one microbatch costs on one stage. The cost profile of a scenario holds
// them per pipeline stage of the p-way split; `for_table` divides them among a table's chunks.

#include <map>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

struct StageCost {
  Time forward;          // T_F
  Time backward_input;   // T_B: backward for inputs (I)
  Time backward_weight;  // T_W: backward for weights
  Time recompute;        // T_R: recomputed forward (defaults to T_F)
  Time fused;            // T_F&B of an overlapped forward+backward pair; zero = T_F + T_B(full)
  Bytes activation;      // M_B: held from F until B
  Bytes weight_grad;     // M_W: part of M_B still held after B until W
  Bytes stage_input;     // what a recomputing stage keeps from F to R (its input tensor)
  Bytes p2p;             // bytes sent to the next stage per microbatch (and gradients back)
  Bytes static_memory;   // weights + gradients + optimizer state of the stage
  // Expert-parallel all-to-all (docs/moe.md): the dispatch + combine time of one F and of one B
  // (a2a_*), and the part of it that `forward` / `backward_input` include (a2a_*_exposed: all of
  // it, or what `parallelism.a2a_overlap` leaves when F and B are paired). Zero without MoE.
  Time a2a_forward, a2a_backward;
  Time a2a_forward_exposed, a2a_backward_exposed;

  Time full_backward() const { return backward_input + backward_weight; }
};

/// An F&B op (DualPipe's overlapped pair) without a given `fused` time: F on `f`, B on `b` lasting
/// `back` (its B, or its full backward when it has no W). Each half's all-to-all runs under the
/// other half's compute: compute(F) + compute(B) + max(0, a2a(F) - compute(B)) + max(0, a2a(B) -
/// compute(F)); without all-to-all, T_F + back.
Time fused_forward_backward(const StageCost& f, const StageCost& b, Time back);
/// The all-to-all time such an op leaves exposed (the two max terms).
Time fused_a2a_exposed(const StageCost& f, const StageCost& b, Time back);

struct CostProfile {
  std::vector<StageCost> stages;  // one per pipeline stage of the p-way split
  /// Individual costs of the p x v table stages of a table with v chunks per device, in
  /// virtual-stage (model) order, when known (a transformer with a chunk layout: each chunk's
  /// layers, the embedding on the first, the LM head on the last; tools/costmodel/model_costs.h).
  std::map<int, std::vector<StageCost>> chunked;

  /// Costs per table stage for a table with `chunks` table stages per profile stage: `chunked`'s
  /// list for that count when there is one; otherwise table stage s takes profile stage
  /// s / chunks with times and bytes divided by `chunks` (p2p bytes are not divided: the
  /// activation tensor between chunks has the same size).
  std::vector<StageCost> for_table(int chunks) const;
  /// A profile where every one of `stages` stages has the same cost.
  static CostProfile uniform(int stages, const StageCost& cost);
};

}  // namespace bubblesim
