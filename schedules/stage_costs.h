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
  Time recompute;        // T_R: the forward an R op redoes (defaults to T_F)
  Time fused;            // T_F&B of an overlapped forward+backward pair; zero = T_F + T_B(full)
  Bytes activation;      // M_B: held from F until B
  Bytes weight_grad;     // M_W: part of M_B still held after B until W
  Bytes stage_input;     // what a recomputing stage keeps from F to R (its input tensor)
  Bytes p2p;             // bytes sent to the next stage per microbatch (and gradients back)
  Bytes static_memory;   // weights + gradients + optimizer state of the stage
  // `overlap.comm_sm_fraction`: the share of the SMs the all-to-all kernels hold while they run
  // under other compute, which then runs that much slower; and any such slowdown `forward` /
  // `backward_input` already include (moe.a2a_sm.*_slowdown; zero from the model, whose lone
  // F and B pay their all-to-all exposed).
  struct SmShare {
    double share = 0;
    Time forward_slowdown, backward_slowdown;
  };
  // The routed experts' GEMMs inside one F, B and W (part of those times, docs/moe.md), at the
  // scenario's `moe.imbalance` and at uniform routing: the trace's expert-phase slices.
  struct Experts {
    Time forward, backward_input, backward_weight;
  };
  struct ExpertPhases {
    Experts load, uniform;
  };
  /// Expert parallelism (docs/moe.md); all zero without MoE.
  struct Moe {
    // The all-to-all dispatch + combine time of one F and of one B (a2a_*), and the part of it
    // that `forward` / `backward_input` include (a2a_*_exposed: all of it from the model; an
    // F&B op overlaps its halves' instead, fused_a2a below).
    Time a2a_forward, a2a_backward;
    Time a2a_forward_exposed, a2a_backward_exposed;
    SmShare a2a_sm;
    // One all-to-all as the replay's flows need it (sim/engine/expert_exchange.h): what each GPU
    // of the EP group dispatches, and how many run in one F and in one B (zero without EP).
    Bytes a2a_bytes;
    std::int32_t a2a_count_forward = 0, a2a_count_backward = 0;
    ExpertPhases experts;
    // The routed experts' part of static_memory (their weights, gradients and optimizer state on
    // this GPU under EP) and of activation (what their MLPs keep per microbatch).
    Bytes expert_static, expert_activation;
  };
  Moe moe;
  /// Recompute inside the backward (`memory.recompute` except granularity stage; docs/memory.md):
  /// the backward recomputes each checkpointed unit right before running back through it, so
  /// F keeps only what `activation` says (the units' inputs, the saved outputs) and B holds one
  /// unit's rebuilt activations while it runs. All zero without.
  struct BackwardRecompute {
    Time time;               // the part of backward_input that redoes forward work
    std::int64_t units = 0;  // checkpointed units one B recomputes, one after the other
    Bytes unit;              // one unit's rebuilt activations: held from B's start to its end
    Bytes not_stored;        // what F no longer keeps for this (M_B without it - activation)
  };
  BackwardRecompute backward_recompute;

  Time full_backward() const { return backward_input + backward_weight; }
};

/// Whether some stage holds routed experts (docs/moe.md): the reports then show expert memory.
inline bool has_expert_memory(const std::vector<StageCost>& stages) {
  for (const StageCost& s : stages)
    if (s.moe.expert_static > Bytes::zero()) return true;
  return false;
}

/// An all-to-all of `a2a` run on the communication stream under `compute` of other work while
/// its kernels hold `sm_share` of the SMs: the compute runs at 1 - sm_share of its speed while
/// they overlap. `hidden`: the overlapped time; `exposed`: the all-to-all still running after the
/// compute ended; `slowdown`: what the compute lost. The pair lasts compute + slowdown + exposed
/// = max(a2a, compute + sm_share x a2a).
struct A2aOverlap {
  Time hidden, exposed, slowdown;
};
A2aOverlap overlap_a2a(Time a2a, Time compute, double sm_share);

/// An F&B op (DualPipe's overlapped pair) without a given `fused` time: F on `f`, B on `b` lasting
/// `back` (its B, or its full backward when it has no W). Each half's all-to-all runs under the
/// other half's compute (overlap_a2a with `f.moe.a2a_sm.share`): compute(F) + compute(B) + both
/// halves' slowdown and exposed time; without all-to-all, T_F + back.
Time fused_forward_backward(const StageCost& f, const StageCost& b, Time back);
/// The two halves of such an op summed: their all-to-all hidden, exposed and the slowdown.
A2aOverlap fused_a2a(const StageCost& f, const StageCost& b, Time back);
/// fused_a2a(...).exposed: the all-to-all time such an op leaves exposed.
Time fused_a2a_exposed(const StageCost& f, const StageCost& b, Time back);

struct CostProfile {
  std::vector<StageCost> stages;  // one per pipeline stage of the p-way split
  /// Individual costs of the p x v table stages of a table with v chunks per device, in
  /// virtual-stage (model) order, when known (a transformer with a chunk layout: each chunk's
  /// layers, the embedding on the first, the LM head on the last; sim/costmodel/model_costs.h).
  std::map<int, std::vector<StageCost>> chunked;

  /// Costs per table stage for a table with `chunks` table stages per profile stage: `chunked`'s
  /// list for that count when there is one; otherwise table stage s takes profile stage
  /// s / chunks with times and bytes divided by `chunks` (p2p bytes and the stage input are not
  /// divided: the activation tensor between chunks has the same size; recompute inside B keeps
  /// its unit count, each chunk recomputing its share of every unit).
  std::vector<StageCost> for_table(int chunks) const;
  /// A profile where every one of `stages` stages has the same cost.
  static CostProfile uniform(int stages, const StageCost& cost);
};

}  // namespace bubblesim
