#pragma once
// Memory settings a scenario gives and both the memory passes and the engine read: when
// activation memory is released, and the recompute / offload policies (docs/memory.md). Plain
// data in the table model, so the scenario layer can hold them without linking the passes.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

/// When activation memory is released (docs/schedule-rules.md 6.2).
enum class ReleaseConvention {
  Split,             // M_B - M_W at the end of B, M_W at the end of W (ZB paper); fused B frees all
  BackwardComplete,  // everything at the op completing the backward (W when split, else B)
};

/// A memory policy. Offload uses none / full / selective; recompute also `op`.
enum class MemoryPolicy { None, Full, Selective, Op };

/// "none", "full", "selective", "op".
constexpr std::string_view memory_policy_name(MemoryPolicy p) {
  switch (p) {
    case MemoryPolicy::None:
      return "none";
    case MemoryPolicy::Full:
      return "full";
    case MemoryPolicy::Selective:
      return "selective";
    case MemoryPolicy::Op:
      return "op";
  }
  return "?";
}

/// Where full recompute runs (`memory.recompute.granularity`, docs/memory.md).
enum class RecomputeGranularity {
  /// Per checkpointed unit, inside the backward, as every framework runs it (torch.utils.checkpoint
  /// around each block, FSDP's checkpoint wrapper, Megatron's --recompute-granularity full): B
  /// recomputes one unit, runs its backward, frees it. A change of costs (the resolve step): F
  /// keeps the units' inputs, B lasts T_R longer and holds one unit's activations while it runs.
  Layer,
  /// One R op per (stage, microbatch), listed right before its B by the recompute pass: the
  /// idealised op of schedule-optimisation papers (the `optimized` generator's R), which may run
  /// before the gradient arrives and rebuilds the whole stage's activation at once.
  Stage,
};

/// "layer", "stage".
constexpr std::string_view recompute_granularity_name(RecomputeGranularity g) {
  return g == RecomputeGranularity::Stage ? "stage" : "layer";
}

/// `memory.recompute` (docs/memory.md). `policy`:
///   full       every checkpointed unit's forward is redone: per unit inside B (granularity
///              layer, the default) or as one R op per (stage, microbatch) (granularity stage, on
///              all, the listed `stages`, or the first ceil(fraction x stages) table stages).
///              With a transformer, which layers: all, one unit per `unit_layers` layers
///              (Megatron's uniform method), the first `layers` of each stage (its block method) or
///              every `every`-th layer (torchtitan's layer-frequency selective AC).
///   selective  Korthikanti et al.'s selective recompute of the attention core: B redoes it.
///   op         torchtitan's per-op selective AC: B redoes every forward op whose output the save
///              list does not keep (every second matmul, the elementwise kernels).
/// Every policy but granularity stage is a change of costs made by the resolve step; the pass
/// adds R ops only for granularity stage.
struct RecomputeSettings {
  MemoryPolicy policy = MemoryPolicy::None;
  RecomputeGranularity granularity = RecomputeGranularity::Layer;  // full only
  std::vector<std::int32_t> stages;         // full, stage: explicit table stages (wins)
  std::optional<double> fraction;           // full, stage: the first ceil(fraction x stages)
  std::optional<std::int64_t> layers;       // full, transformer: the first layers of each stage
  std::optional<std::int64_t> unit_layers;  // full, layer: layers per checkpointed unit
  std::optional<std::int64_t> every;        // full, layer: every every-th layer of each stage
  /// Recompute runs inside the backward (a change of costs, no R ops).
  bool in_backward() const {
    return policy == MemoryPolicy::Selective || policy == MemoryPolicy::Op ||
           (policy == MemoryPolicy::Full && granularity == RecomputeGranularity::Layer);
  }
};

/// `memory.offload`; d2h / h2d are derived per device by the runner's resolve step.
struct OffloadSettings {
  MemoryPolicy policy = MemoryPolicy::None;
  std::int32_t prefetch = 1;         // >= 1: reload starts this many compute ops before its B
  std::vector<std::int32_t> stages;  // selective: explicit table stages
  Time min_idle;                     // extra idle time an activation must leave beyond the copies
  std::vector<Bandwidth> d2h, h2d;   // per device: bottleneck bandwidth of the route to / from host
};

}  // namespace bubblesim
