#pragma once
// PipeOffload's k for a resolved scenario (docs/memory.md): whether offloading can hide behind
// compute.

#include <cstdint>
#include <optional>

#include "sim/runner/resolve.h"
#include "sim/units/rates.h"

namespace bubblesim {

/// k = T_offload / T_compute with T_offload = M_B / (D2H bandwidth of the stage's route) and
/// T_compute = T_F + T_B + T_W of that pipeline stage; the largest over stages is reported. The
/// closed form 10 / (3 (6h + s)) * (GPU FLOP/s) / (PCIe bytes/s) needs a transformer (GPU FLOP/s =
/// flops * efficiency; PCIe = the smallest D2H route bandwidth). hidden: k <= 1 (the scenario's
/// k, else the closed form's).
struct OffloadAnalysis {
  std::optional<double> k;
  std::optional<std::int32_t> k_stage;  // the stage giving the largest k
  std::optional<double> k_formula;
  std::optional<bool> hidden;
  std::optional<Bandwidth> bandwidth;  // smallest D2H bandwidth over devices
};
OffloadAnalysis analyze_offload(const ResolvedScenario& resolved);

}  // namespace bubblesim
