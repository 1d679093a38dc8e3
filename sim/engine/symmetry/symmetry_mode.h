#pragma once
// When a replay's flows are solved by class (class_flows.h) and when one by one, and the
// report's words for it (docs/engine.md, "Symmetric flows").

#include <cstdint>
#include <string>

namespace bubblesim {

/// EngineInput::symmetry (`run --symmetry`): Auto solves by class wherever it is exact; Off
/// solves every flow on its own (the ablation, and the reference the differential test uses).
enum class SymmetryMode : std::uint8_t { Auto, Off };

/// How a replay solved its flows: metrics.comm.symmetry.
struct FlowSymmetry {
  std::string mode;                  // "symmetric", "full", or "" when no flow ran on a topology
  std::string reason;                // why
  std::int64_t flows_laid_out = 0;   // flows of every shape (symmetric)
  std::int64_t flows_started = 0;    // flows the launches stood for
  std::int64_t classes_started = 0;  // flows solved (representatives)
  std::int64_t flow_classes = 0;
};

}  // namespace bubblesim
