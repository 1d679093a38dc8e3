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

enum class MemoryPolicy { None, Full, Selective };

/// "none", "full", "selective".
constexpr std::string_view memory_policy_name(MemoryPolicy p) {
  switch (p) {
    case MemoryPolicy::None:
      return "none";
    case MemoryPolicy::Full:
      return "full";
    case MemoryPolicy::Selective:
      return "selective";
  }
  return "?";
}

/// `memory.recompute` (docs/memory.md). `policy`:
///   full       the recompute pass lists R(s, j) before every B of the chosen table stages (all,
///              the listed `stages`, or the first ceil(fraction x stages)); F keeps the stage's
///              input until R rebuilds the activation. With a transformer, `layers` of each
///              stage are recomputed (R = their forward; F keeps the rest's activations).
///   selective  Korthikanti et al.'s selective recompute of the attention core: a change of
///              costs (B redoes the attention core, M_B drops its activations), made by the
///              resolve step; the pass adds no R ops.
struct RecomputeSettings {
  MemoryPolicy policy = MemoryPolicy::None;
  std::vector<std::int32_t> stages;    // full: explicit table stages (wins over fraction)
  std::optional<double> fraction;      // full: the first ceil(fraction x stages) table stages
  std::optional<std::int64_t> layers;  // full, transformer: layers per stage recomputed
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
