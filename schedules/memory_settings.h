#pragma once
// Memory settings a scenario gives and both the memory passes and the engine read: when
// activation memory is released, and the recompute / offload policies (docs/memory.md). Plain
// data in the table model, so the scenario layer can hold them without linking the passes.

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

/// When activation memory is released (SCHEDULES.md 6.2).
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

/// `memory.recompute`.
struct RecomputeSettings {
  MemoryPolicy policy = MemoryPolicy::None;
  std::vector<std::int32_t> stages;  // selective: explicit table stages (wins over fraction)
  double fraction = 0.5;             // selective without stages
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
